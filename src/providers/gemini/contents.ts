import type {
  DocumentPart,
  ImagePart,
  Message,
  Part,
  ReasoningPart,
  ToolCallPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import { invalidRequest } from "../../errors.ts";
import { parseImageDataUrl, UNCAPPED } from "../../http/image_data_url.ts";
import { systemReminder } from "../system_reminder.ts";
import { parseCallId } from "./call_ids.ts";
import type { GeminiContent, GeminiPart } from "./types.ts";

/** The style of reasoning parts that carry Gemini's thought signatures. */
export const GEMINI_STYLE = "gemini";

/** What Gemini documents for a function-call turn it did not write (history from another
 * model or a client): the signature that tells it not to check. */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** The image types Gemini reads. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/webp"]);
/** Image types by the extension of a URL's path, for `fileData`. */
const URL_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

/** The conversation of a `generateContent` request. */
export interface GeminiConversation {
  system: { text: string }[];
  contents: GeminiContent[];
}

/** A call of the conversation, as its results must answer it. */
interface KnownCall {
  name: string;
  geminiId: string | null;
  /** Its position in its model turn (results are sent in that order). */
  order: number;
}

/**
 * The `systemInstruction` parts and `contents` for a canonical conversation:
 * - the text of system and developer messages before the first model turn as the system
 *   instruction; one after a model turn stays at its place, as user text marked as a system
 *   reminder (`../system_reminder.ts`);
 * - assistant messages as `model` turns: text; refusals as text; tool calls as `functionCall`
 *   parts with their arguments object, Gemini's id and the thought signature the call's id
 *   carries (call_ids.ts); Gemini reasoning with a signature back as it came (a thought
 *   summary with `thought: true`, a bare signature on the part before it, else the one after).
 *   Reasoning of another style, and unsigned thought summaries, are left out. A function-call
 *   turn whose first call has no signature (history Gemini did not write) gets Gemini's
 *   documented skip signature;
 * - user and tool messages as `user` turns, the results of one model turn's calls as
 *   `functionResponse` parts (`{output}` or `{error}`, named after their call, with its id)
 *   first and in the order of the calls, then text, images (`inlineData`, or `fileData` for
 *   an https URL of a PNG, JPEG or WebP file) and documents (a PDF as `inlineData`, or
 *   `fileData` for its URL; a text as a text part, its title on the first line); the images and
 *   documents of a result after the result;
 * - consecutive turns of one role merged; blank text left out.
 *
 * `dropped` gets `detail` for an image detail, `cache_control` for cache markers, and a
 * document's `context` and `citations`, which Gemini has no field for. Throws a 400 naming the
 * field for arguments that are not a JSON object, a result of no known call, an image Gemini
 * cannot read, and when no turn is left.
 */
export function toGeminiContents(
  conversation: readonly Message[],
  dropped: Set<string>,
  mediaInResponses = false,
): GeminiConversation {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  const calls = new Map<string, KnownCall>();
  /** The position of each function response's call in its model turn. */
  const order = new Map<GeminiPart, number>();
  /** Whether the model spoke yet: a system message after that stays at its place. */
  let began = false;
  conversation.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (message.parts.some((p) => "cache" in p && p.cache !== undefined)) {
      dropped.add("cache_control");
    }
    if (message.role === "assistant") began = true;
    switch (message.role) {
      case "system":
      case "developer": {
        if (began) {
          const text = systemReminder(message.parts);
          if (text !== null) addTurn(contents, "user", [{ text }], order);
          break;
        }
        for (const part of message.parts) {
          if (part.type === "text" && part.text.trim() !== "") system.push({ text: part.text });
        }
        break;
      }
      case "assistant":
        // The calls a result may answer are those of the model turn just before it.
        if (contents.at(-1)?.role !== "model") calls.clear();
        addTurn(contents, "model", modelParts(message.parts, at, calls), order);
        break;
      case "user":
      case "tool":
        addTurn(
          contents,
          "user",
          userParts(message.parts, at, { calls, order, dropped, mediaInResponses }),
          order,
        );
    }
  });
  if (contents.length === 0) {
    throw invalidRequest(
      "messages must contain at least one user or assistant message with content.",
      "messages",
    );
  }
  return { system, contents };
}

/** Appends parts as a new turn, or to the last one of the same role; function responses
 * lead, in the order of their calls (`order`). */
function addTurn(
  contents: GeminiContent[],
  role: GeminiContent["role"],
  parts: GeminiPart[],
  order: ReadonlyMap<GeminiPart, number>,
) {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  const all = last?.role === role ? [...last.parts, ...parts] : parts;
  const responses = all.filter((p) => order.has(p));
  responses.sort((a, b) => order.get(a)! - order.get(b)!);
  const merged = [...responses, ...all.filter((p) => !order.has(p))];
  if (last?.role === role) last.parts = merged;
  else contents.push({ role, parts: merged });
}

function modelParts(parts: readonly Part[], at: string, calls: Map<string, KnownCall>) {
  const out: GeminiPart[] = [];
  /** A bare signature that came before any part it could go on. */
  let waiting: string | null = null;
  let callIndex = 0;
  const add = (part: GeminiPart) => {
    if (waiting !== null && part.thoughtSignature === undefined) {
      part.thoughtSignature = waiting;
      waiting = null;
    }
    out.push(part);
  };
  for (const part of parts) {
    switch (part.type) {
      case "text":
      case "refusal":
        if (part.text.trim() !== "") add({ text: part.text });
        break;
      case "reasoning": {
        const signature = signatureOf(part);
        if (signature === null) break;
        if (part.text !== "") {
          add({ text: part.text, thought: true, thoughtSignature: signature });
          break;
        }
        const before = out.at(-1);
        if (before !== undefined && before.thoughtSignature === undefined) {
          before.thoughtSignature = signature;
        } else waiting = signature;
        break;
      }
      case "tool_call": {
        const param = `${at}.tool_calls[${callIndex}].function.arguments`;
        add(functionCall(part, param));
        const { geminiId } = parseCallId(part.id);
        calls.set(part.id, { name: part.name, geminiId, order: callIndex++ });
        break;
      }
    }
  }
  const first = out.find((p) => p.functionCall !== undefined);
  if (first !== undefined && first.thoughtSignature === undefined) {
    first.thoughtSignature = SKIP_SIGNATURE;
  }
  return out;
}

function signatureOf(part: ReasoningPart): string | null {
  return part.style === GEMINI_STYLE && part.signature ? part.signature : null;
}

function functionCall(part: ToolCallPart, param: string): GeminiPart {
  const { geminiId, signature } = parseCallId(part.id);
  const call: GeminiPart["functionCall"] = { name: part.name, args: argumentsOf(part, param) };
  if (geminiId !== null) call.id = geminiId;
  const out: GeminiPart = { functionCall: call };
  if (signature !== null) out.thoughtSignature = signature;
  return out;
}

/** What writing a user turn's parts shares with the rest of the conversation. */
interface UserTurn {
  calls: Map<string, KnownCall>;
  order: Map<GeminiPart, number>;
  dropped: Set<string>;
  /** Whether a tool result's inline media go inside its `functionResponse` (Gemini 3). */
  mediaInResponses: boolean;
}

function userParts(parts: readonly Part[], at: string, turn: UserTurn): GeminiPart[] {
  const { calls, order, dropped, mediaInResponses } = turn;
  const out: GeminiPart[] = [];
  parts.forEach((part, j) => {
    const param = `${at}.content[${j}]`;
    switch (part.type) {
      case "text":
        if (part.text.trim() !== "") out.push({ text: part.text });
        break;
      case "image":
        out.push(image(part, `${param}.image_url.url`, dropped));
        break;
      case "document":
        out.push(document(part, dropped));
        break;
      case "tool_result": {
        const call = calls.get(part.callId);
        if (call === undefined) {
          throw invalidRequest(
            `${at} answers the tool call "${part.callId}", which the assistant message before it does not make: Gemini needs the call's name.`,
            `${at}.tool_call_id`,
          );
        }
        const response = functionResponse(part, call);
        order.set(response, call.order);
        out.push(response);
        const media: GeminiPart[] = [];
        part.content.forEach((c, k) => {
          if (c.type === "image") {
            media.push(image(c, `${param}.content[${k}].image_url.url`, dropped));
          } else if (c.type === "document") media.push(document(c, dropped));
        });
        // Gemini 3 takes a tool's inline media inside its response (as the Gemini CLI sends
        // them to gemini-3 models); the rest, and every older model's, follow it.
        const inline = mediaInResponses ? media.filter((m) => m.inlineData !== undefined) : [];
        if (inline.length > 0) {
          response.functionResponse!.parts = inline.map((m) => ({ inlineData: m.inlineData! }));
        }
        out.push(...media.filter((m) => !inline.includes(m)));
        break;
      }
    }
  });
  return out;
}

function functionResponse(part: ToolResultPart, call: KnownCall): GeminiPart {
  const text = part.content.flatMap((c) => c.type === "text" ? [c.text] : []).join("\n");
  const response: GeminiPart["functionResponse"] = {
    name: call.name,
    response: part.isError ? { error: text } : { output: text },
  };
  if (call.geminiId !== null) response.id = call.geminiId;
  return { functionResponse: response };
}

function image(part: ImagePart, param: string, dropped: Set<string>): GeminiPart {
  if (part.detail !== undefined && part.detail !== "auto") dropped.add("detail");
  const { source } = part;
  if (source.kind === "url" && !source.url.startsWith("data:")) {
    const extension = /^https:\/\/[^?#]+\.([a-z]+)(?:[?#]|$)/i.exec(source.url)?.[1];
    const mimeType = extension === undefined ? undefined : URL_TYPES[extension.toLowerCase()];
    if (mimeType === undefined) {
      throw invalidRequest(
        `${param} must be a base64 image data URL, or an https:// URL of a .png, .jpg or .webp file: Gemini needs an image URL's type.`,
        param,
        "invalid_image",
      );
    }
    return { fileData: { mimeType, fileUri: source.url } };
  }
  const url = source.kind === "url"
    ? source.url
    : `data:${source.mediaType};base64,${source.base64}`;
  const checked = parseImageDataUrl(url, param, UNCAPPED);
  if (!IMAGE_TYPES.has(checked.mediaType)) {
    throw invalidRequest(
      `${param} is a ${checked.mediaType} image: Gemini reads PNG, JPEG and WebP images.`,
      param,
      "invalid_image",
    );
  }
  return { inlineData: { mimeType: checked.mediaType, data: checked.base64 } };
}

function document(part: DocumentPart, dropped: Set<string>): GeminiPart {
  if (part.context !== undefined) dropped.add("context");
  if (part.citations === true) dropped.add("citations");
  const { source } = part;
  switch (source.kind) {
    case "data":
      return { inlineData: { mimeType: source.mediaType, data: source.base64 } };
    case "url":
      return { fileData: { mimeType: "application/pdf", fileUri: source.url } };
    case "text":
      return { text: part.title === undefined ? source.text : `${part.title}\n${source.text}` };
  }
}

function argumentsOf(part: ToolCallPart, param: string): Record<string, unknown> {
  if (part.arguments.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(part.arguments);
  } catch {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  return value as Record<string, unknown>;
}
