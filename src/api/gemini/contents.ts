/**
 * The `systemInstruction` and `contents` of a Gemini request as canonical messages, each part
 * one canonical part, in order:
 * - `text` -> text; a `thought: true` text -> reasoning of style `gemini`;
 * - a `thoughtSignature` -> on a thought, its reasoning's signature; on any other part, a
 *   reasoning part of style `gemini` holding only the signature, right after that part (where
 *   a Gemini back end puts it back: the same part; other back ends drop it);
 * - `inlineData` of an image -> an image (decoded and checked with the request's other
 *   images); `fileData` of an image at an https:// URL -> an image by URL;
 * - `inlineData` of a PDF -> a PDF document, of `text/plain` -> a text document (its bytes
 *   read as UTF-8); `fileData` of a PDF at an https:// URL -> a PDF document by URL;
 * - `functionCall` -> a tool call (its `args` as JSON text; its `id`, else one made from its
 *   place), `functionResponse` -> the result of the call it answers (by `id`, else the first
 *   unanswered call of that name in the model turn before): its `response` as text (`output`
 *   or `error` as written when it is the only field, else the object's JSON), an error when
 *   it holds only `error`, and the images and documents of its `parts` (Gemini 3's multimodal
 *   function responses) after the text.
 * Other data (other documents, audio, video, files, executable code and its results) is
 * recorded in `uses`: only a Gemini back end takes it. Roles are `user` (the default) and `model`.
 */
import type {
  DocumentPart,
  ImagePart,
  Message,
  Part,
  ReasoningPart,
  TextPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import type { Uses } from "../../canonical/uses.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { FUNCTION_NAME } from "../shared/tool_names.ts";
import { PDF, pdfSource, TEXT, textSource } from "../shared/documents.ts";
import type { PendingImages } from "../shared/images.ts";

/** The style of reasoning that carries Gemini's thought signatures. */
export const GEMINI_STYLE = "gemini";

const ROLES = ["user", "model"] as const;
const AT_LEAST_ONE = { minItems: 1 } as const;
const NON_EMPTY = { nonEmpty: true } as const;
/** Image types the gateway reads inline (the other doors' list). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"]);
const HTTPS = /^https:\/\//i;
/** Part fields that hold data only Gemini takes. */
const GEMINI_ONLY = ["executableCode", "codeExecutionResult", "videoMetadata"] as const;

/** What reading parts shares. */
export interface ContentsContext {
  pending: PendingImages;
  uses: Uses;
  /** Only counted (`countTokens`): a `functionResponse` that answers no call of the turn before
   * is counted as its text, as Gemini counts one (the Gemini CLI counts a tool's output alone). */
  counting?: boolean;
}

/** A call of the model turn before, as its results find it. */
interface Call {
  id: string;
  name: string;
  answered: boolean;
}

/** `systemInstruction`: a content whose text parts make one system message (none when
 * absent). */
export function parseSystemInstruction(body: Fields): Message[] {
  const system = body.object("systemInstruction", OPTIONAL);
  if (system === undefined) return [];
  system.string("role", OPTIONAL);
  const parts: Part[] = [];
  for (const item of system.array("parts", OPTIONAL) ?? []) {
    const text = item.object().string("text", OPTIONAL);
    if (text !== undefined && text !== "") parts.push({ type: "text", text });
  }
  return parts.length === 0 ? [] : [{ role: "system", parts }];
}

/** `contents`: a non-empty list of user and model turns. */
export function parseContents(contents: Reader, ctx: ContentsContext): Message[] {
  let calls: Call[] = [];
  return contents.array(AT_LEAST_ONE).map((item, i): Message => {
    const content = item.object();
    const role = content.oneOf("role", ROLES, OPTIONAL) ?? "user";
    const parts: Part[] = [];
    const made: Call[] = [];
    content.array("parts", AT_LEAST_ONE).forEach((r, j) => {
      const p = r.object();
      const before = parts.length;
      if (role === "model") modelPart(p, `${i}_${j}`, parts, made, ctx);
      else userPart(p, parts, calls, ctx);
      const signature = p.string("thoughtSignature", OPTIONAL);
      if (signature !== undefined && signature !== "") {
        const own = parts.length > before ? parts.at(-1) : undefined;
        if (own?.type === "reasoning" && own.signature === undefined) own.signature = signature;
        else parts.push({ type: "reasoning", text: "", signature, style: GEMINI_STYLE });
      }
    });
    if (role === "model") calls = made;
    return { role: role === "model" ? "assistant" : "user", parts };
  });
}

/** A part of a model turn. */
function modelPart(p: Fields, place: string, parts: Part[], calls: Call[], ctx: ContentsContext) {
  const call = p.object("functionCall", OPTIONAL);
  if (call !== undefined) {
    ctx.uses.toolUses.push(p.reader.path);
    const name = call.string("name", FUNCTION_NAME);
    const id = call.string("id", OPTIONAL) || `call_${place}`;
    const args = call.object("args", OPTIONAL)?.value ?? {};
    calls.push({ id, name, answered: false });
    parts.push({ type: "tool_call", id, name, arguments: JSON.stringify(args) });
    return;
  }
  const text = p.string("text", OPTIONAL);
  if (text !== undefined) {
    if (p.boolean("thought", OPTIONAL) === true) {
      parts.push({ type: "reasoning", text, style: GEMINI_STYLE } satisfies ReasoningPart);
    } else if (text !== "") parts.push({ type: "text", text });
    return;
  }
  otherPart(p, parts, ctx);
}

/** A part of a user turn. */
function userPart(p: Fields, parts: Part[], calls: Call[], ctx: ContentsContext) {
  const response = p.object("functionResponse", OPTIONAL);
  if (response !== undefined) {
    ctx.uses.toolUses.push(p.reader.path);
    parts.push(toolResult(response, calls, ctx));
    return;
  }
  const text = p.string("text", OPTIONAL);
  if (text !== undefined) {
    p.boolean("thought", OPTIONAL);
    if (text !== "") parts.push({ type: "text", text });
    return;
  }
  otherPart(p, parts, ctx);
}

/** Inline or file data: an image, a document, or data only Gemini takes; nothing for a part
 * without data (a bare signature). */
function otherPart(p: Fields, parts: Part[], ctx: ContentsContext) {
  const inline = p.object("inlineData", OPTIONAL);
  if (inline !== undefined) {
    const mimeType = inline.string("mimeType", NON_EMPTY).toLowerCase();
    const data = inline.get("data");
    if (mimeType === PDF) {
      ctx.uses.documents.push(p.reader.path);
      parts.push({ type: "document", source: pdfSource(data.string(), data) });
      return;
    }
    if (mimeType === TEXT) {
      parts.push({ type: "document", source: textSource(data.string(), data) });
      return;
    }
    if (!IMAGE_TYPES.has(mimeType)) {
      ctx.uses.protocolOnly.push({ path: inline.get("mimeType").path, type: mimeType });
      return;
    }
    ctx.uses.images.push(p.reader.path);
    const part: ImagePart = { type: "image", source: { kind: "url", url: "" } };
    const type = mimeType === "image/jpg" ? "image/jpeg" : mimeType;
    ctx.pending.fields.push({ url: `data:${type};base64,${data.string()}`, param: data.path });
    ctx.pending.parts.push(part);
    parts.push(part);
    return;
  }
  const file = p.object("fileData", OPTIONAL);
  if (file !== undefined) {
    const uri = file.string("fileUri", NON_EMPTY);
    const mimeType = file.string("mimeType", OPTIONAL)?.toLowerCase() ?? "";
    const byUrl = HTTPS.test(uri) && URL.canParse(uri);
    if (mimeType === PDF && byUrl) {
      ctx.uses.documents.push(p.reader.path);
      parts.push({ type: "document", source: { kind: "url", url: uri } });
      return;
    }
    if (!IMAGE_TYPES.has(mimeType) || !byUrl) {
      ctx.uses.protocolOnly.push({ path: file.reader.path, type: "fileData" });
      return;
    }
    ctx.uses.images.push(p.reader.path);
    parts.push({ type: "image", source: { kind: "url", url: uri } });
    return;
  }
  for (const name of GEMINI_ONLY) {
    const value = p.optional(name);
    if (value !== undefined) ctx.uses.protocolOnly.push({ path: value.path, type: name });
  }
}

/** A `functionResponse` as the result of the call it answers; when `counting`, one that answers
 * none as a text of its name and response. */
function toolResult(
  f: Fields,
  calls: Call[],
  ctx: ContentsContext,
): ToolResultPart | TextPart {
  const name = f.string("name", FUNCTION_NAME);
  const id = f.string("id", OPTIONAL);
  const call = calls.find((c) => !c.answered && (id ? c.id === id : c.name === name)) ??
    (id ? calls.find((c) => !c.answered && c.name === name) : undefined);
  if (call === undefined && ctx.counting) {
    const response = f.object("response", OPTIONAL)?.value ?? {};
    return { type: "text", text: JSON.stringify({ name, response }) };
  }
  if (call === undefined) {
    throw f.reader.invalid(
      `expected the response to a functionCall of the model turn before, but it has no unanswered call ${
        id ? `with id ${quote(id)}` : `named ${quote(name)}`
      }`,
    );
  }
  call.answered = true;
  const response = f.object("response", OPTIONAL)?.value ?? {};
  const keys = Object.keys(response);
  const only = keys.length === 1 ? response[keys[0]!] : undefined;
  const isError = keys.length === 1 && keys[0] === "error";
  const text = typeof only === "string" && (keys[0] === "output" || isError)
    ? only
    : JSON.stringify(response);
  const content: ToolResultPart["content"] = text === "" ? [] : [{ type: "text", text }];
  content.push(...responseMedia(f, ctx));
  return { type: "tool_result", callId: call.id, content, isError };
}

/** A `functionResponse`'s `parts` (Gemini 3's multimodal function responses): its images and
 * documents, each read as a part of a user turn is (`displayName` a document's title); other
 * data recorded as only Gemini's. */
function responseMedia(f: Fields, ctx: ContentsContext): (ImagePart | DocumentPart)[] {
  const media: (ImagePart | DocumentPart)[] = [];
  for (const item of f.array("parts", OPTIONAL) ?? []) {
    const p = item.object();
    const read: Part[] = [];
    otherPart(p, read, ctx);
    const name = (p.object("inlineData", OPTIONAL) ?? p.object("fileData", OPTIONAL))
      ?.string("displayName", OPTIONAL);
    for (const part of read) {
      if (part.type === "document" && name) part.title = name;
      if (part.type === "image" || part.type === "document") media.push(part);
    }
  }
  return media;
}
