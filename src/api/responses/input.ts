/**
 * A Responses request's `input` items as canonical messages: messages (a role with a string or
 * content parts: `input_text`, `input_image`, `input_file` (a document: a PDF or text as a data
 * URL, or a PDF by https:// URL), `output_text`, `refusal`), `function_call` and `custom_tool_call`
 * items (under their canonical tool names: tool_map.ts), their `function_call_output` and
 * `custom_tool_call_output` items, and `reasoning` items. An assistant's consecutive items
 * (reasoning, its message, its calls) make one canonical assistant message; each call's output is a
 * tool message. Every function call must be answered by an output item (OpenAI's rule: "No tool
 * output found"), the calls a previous response ended with too: the first that is not is the
 * `unanswered` error. Image data URLs are left to `pending`, decoded once the whole request is
 * read.
 */
import type {
  DocumentPart,
  ImagePart,
  Message,
  Part,
  TextPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue, type ValidationError } from "../../validation/error.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { dataUrlSource, urlSource } from "../shared/documents.ts";
import type { PendingImages } from "../shared/images.ts";
import { decodeReasoning } from "./reasoning_envelope.ts";
import { customArguments, type ToolMap } from "./tool_map.ts";

/** Where the request uses what a model may lack, for the capability checks. */
export interface InputUses {
  /** The first image part's path. */
  image?: string;
  /** The first function call or function call output item's path. */
  toolItem?: string;
}

/** What the input items make. */
export interface ParsedInput {
  messages: Message[];
  /** The items as sent, one JSON object each (a string input as its one user message). */
  items: Record<string, unknown>[];
  uses: InputUses;
  /** The 400 for the first function call that no output item answers (OpenAI's "No tool
   * output found"), for the caller to throw after the capability checks; else `null`. */
  unanswered: ValidationError | null;
}

const ITEM_TYPES = [
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
] as const;
const ROLES = ["user", "system", "developer", "assistant"] as const;
const USER_PARTS = ["input_text", "input_image", "input_file"] as const;
const INSTRUCTION_PARTS = ["input_text"] as const;
const ASSISTANT_PARTS = ["output_text", "refusal"] as const;
const DETAILS = ["auto", "low", "high", "original"] as const;
const HTTPS = /^https:\/\//i;
const NON_EMPTY = { nonEmpty: true } as const;
const OPTIONAL_NAME = { optional: true, nonEmpty: true } as const;
const ARGUMENTS = { expected: "a string of JSON-encoded arguments" } as const;
const CONTENT = { minItems: 1, expected: "a string or an array of content parts" } as const;

/** Reads `input` (a string, or an array of items) after the `history` messages of a previous
 * response (whose function calls its items must answer); `tools` names the calls' tools. */
export function parseInput(
  r: Reader,
  history: readonly Message[],
  pending: PendingImages,
  tools: ToolMap,
): ParsedInput {
  const reader = new InputReader(history, pending, tools);
  let items: Record<string, unknown>[];
  if (typeof r.value === "string") {
    const text = r.value;
    reader.messages.push({ role: "user", parts: [{ type: "text", text }] });
    items = [{ type: "message", role: "user", content: text }];
  } else {
    const list = r.array({ expected: "a string or an array of input items" });
    list.forEach((item) => reader.add(item));
    items = list.map((i) => i.value as Record<string, unknown>);
  }
  return { messages: reader.messages, items, uses: reader.uses, unanswered: reader.unanswered() };
}

/** Reads a stored conversation (a previous response's `history`, an array of items) as
 * messages. Its last function calls may be unanswered: the next input answers them. */
export function parseHistory(r: Reader, pending: PendingImages, tools: ToolMap): Message[] {
  const reader = new InputReader([], pending, tools);
  r.array().forEach((item) => reader.add(item));
  return reader.messages;
}

/** Builds the messages item by item. */
class InputReader {
  readonly messages: Message[] = [];
  readonly uses: InputUses = {};
  /** Function call ids seen so far, each with its `call_id`'s path (`null` for a call of the
   * history), and the ids already answered. */
  readonly #calls = new Map<string, string | null>();
  readonly #answered = new Set<string>();
  readonly #pending: PendingImages;
  readonly #tools: ToolMap;

  constructor(history: readonly Message[], pending: PendingImages, tools: ToolMap) {
    this.#pending = pending;
    this.#tools = tools;
    for (const m of history) {
      for (const p of m.parts) {
        if (p.type === "tool_call") this.#calls.set(p.id, null);
        else if (p.type === "tool_result") this.#answered.add(p.callId);
      }
    }
  }

  add(item: Reader): void {
    const f = item.object();
    const type = f.has("type") ? f.oneOf("type", ITEM_TYPES) : "message";
    f.string("id", OPTIONAL);
    f.oneOf("status", ["in_progress", "completed", "incomplete"], OPTIONAL);
    switch (type) {
      case "message":
        return this.#message(f);
      case "function_call":
        return this.#call(f, false);
      case "custom_tool_call":
        return this.#call(f, true);
      case "function_call_output":
      case "custom_tool_call_output":
        return this.#output(f);
      case "reasoning":
        return this.#reasoning(f);
    }
  }

  #message(f: Fields): void {
    const role = f.oneOf("role", ROLES);
    const content = f.get("content");
    if (role === "assistant") {
      const parts: Part[] = typeof content.value === "string"
        ? [{ type: "text", text: content.value }]
        : content.array(CONTENT).map((p) => assistantPart(p.object()));
      this.#assistant().push(...parts);
      return;
    }
    const allowed = role === "user" ? USER_PARTS : INSTRUCTION_PARTS;
    const parts = typeof content.value === "string"
      ? [{ type: "text", text: content.value } as TextPart]
      : content.array(CONTENT).map((p) => this.#inputPart(p.object(), allowed, role));
    this.messages.push({ role, parts });
  }

  #inputPart(
    p: Fields,
    allowed: readonly string[],
    role: string,
  ): TextPart | ImagePart | DocumentPart {
    const type = p.get("type");
    const value = type.value;
    if ((value === "input_image" || value === "input_file") && !allowed.includes(value)) {
      throw type.invalid(
        `${value} parts are only allowed in user messages, not in ${role} messages`,
      );
    }
    const kind = type.oneOf(allowed);
    if (kind === "input_text") return { type: "text", text: p.string("text") };
    if (kind === "input_file") return inputFile(p);
    this.uses.image ??= p.reader.path;
    return this.#image(p);
  }

  /** An `input_image` part: an https:// URL (passed on, never fetched) or a data URL. */
  #image(p: Fields): ImagePart {
    if (p.has("file_id")) {
      throw p.get("file_id").invalid("file ids are not supported by this gateway; send image_url");
    }
    const url = p.string("image_url", {
      expected: "a string (a base64 image data URL or an https:// URL)",
    });
    const part: ImagePart = { type: "image", source: { kind: "url", url } };
    const detail = p.oneOf("detail", DETAILS, OPTIONAL);
    if (detail !== undefined) part.detail = detail;
    const param = p.get("image_url").path;
    if (HTTPS.test(url)) {
      if (!URL.canParse(url)) {
        throw invalidValue(param, `expected a valid URL, but got ${quote(url)}`, "invalid_image");
      }
    } else {
      this.#pending.fields.push({ url, param });
      this.#pending.parts.push(part);
    }
    return part;
  }

  /** A `function_call`, or a `custom_tool_call` (its `input` as the canonical `input`
   * argument). */
  #call(f: Fields, custom: boolean): void {
    this.uses.toolItem ??= f.reader.path;
    const id = f.string("call_id", NON_EMPTY);
    if (this.#calls.has(id)) {
      throw f.get("call_id").invalid(`expected a unique call id, but got ${quote(id)} again`);
    }
    this.#calls.set(id, f.get("call_id").path);
    const name = f.string("name", NON_EMPTY);
    const namespace = f.string("namespace", OPTIONAL_NAME);
    this.#assistant().push({
      type: "tool_call",
      id,
      name: this.#tools.canonical(name, namespace),
      arguments: custom ? customArguments(f.string("input")) : f.string("arguments", ARGUMENTS),
    });
  }

  #output(f: Fields): void {
    this.uses.toolItem ??= f.reader.path;
    const id = f.string("call_id", NON_EMPTY);
    if (!this.#calls.has(id)) {
      throw f.get("call_id").invalid(
        `no function_call or custom_tool_call item with call_id ${
          quote(id)
        } comes before this output`,
      );
    }
    if (this.#answered.has(id)) {
      throw f.get("call_id").invalid(`the function call ${quote(id)} has already been answered`);
    }
    this.#answered.add(id);
    f.string("name", OPTIONAL_NAME);
    f.string("namespace", OPTIONAL_NAME);
    const output = f.get("output");
    const content: ToolResultPart["content"] = typeof output.value === "string"
      ? [{ type: "text", text: output.value }]
      : output.array({ expected: "a string or an array of content parts" }).map((p) =>
        this.#inputPart(p.object(), USER_PARTS, "function_call_output")
      );
    const result: ToolResultPart = { type: "tool_result", callId: id, content, isError: false };
    this.messages.push({ role: "tool", parts: [result] });
  }

  /** The error for the first function call that no output item answers, if any. */
  unanswered(): ValidationError | null {
    for (const [id, path] of this.#calls) {
      if (this.#answered.has(id)) continue;
      return path === null
        ? invalidValue(
          "input",
          `no tool output found for function call ${
            quote(id)
          } of the previous response; the input must answer it with a function_call_output item`,
        )
        : invalidValue(
          path,
          `no tool output found for function call ${
            quote(id)
          }; a function_call item must be answered by a function_call_output item after it`,
        );
    }
    return null;
  }

  #reasoning(f: Fields): void {
    const summary = f.array("summary").map((s) => {
      const part = s.object();
      part.oneOf("type", ["summary_text"]);
      return part.string("text");
    }).join("\n\n");
    f.array("content", OPTIONAL)?.forEach((c) => {
      const part = c.object();
      part.oneOf("type", ["reasoning_text"]);
      part.string("text");
    });
    const encrypted = f.string("encrypted_content", OPTIONAL);
    if (encrypted === undefined) {
      if (summary !== "") this.#assistant().push({ type: "reasoning", text: summary });
      return;
    }
    const part = decodeReasoning(encrypted, summary);
    if (part === null) {
      throw f.get("encrypted_content").invalid(
        "expected the encrypted_content of a reasoning item this gateway returned, but it does not decode",
      );
    }
    this.#assistant().push(part);
  }

  /** The parts of the assistant message being built (a new one unless the last is one). */
  #assistant(): Part[] {
    const last = this.messages.at(-1);
    if (last?.role === "assistant") return last.parts;
    const message: Message = { role: "assistant", parts: [] };
    this.messages.push(message);
    return message.parts;
  }
}

/** An `input_file` part as a document: its `file_data` a base64 data URL of a PDF or of text,
 * else its `file_url` an https:// URL (passed on, never fetched); its `filename` the title. A
 * field that is `null` is absent (OpenAI's schema allows it for each). */
function inputFile(p: Fields): DocumentPart {
  const given = (name: string) => {
    const field = p.optional(name);
    return field === undefined || field.value === null ? undefined : field;
  };
  const id = given("file_id");
  if (id !== undefined) {
    throw id.invalid("file ids are not supported by this gateway; send file_data or file_url");
  }
  const data = given("file_data");
  const url = given("file_url");
  if (data === undefined && url === undefined) {
    throw p.reader.invalid("expected file_data or file_url, but got neither");
  }
  const source = data !== undefined ? dataUrlSource(data) : urlSource(url!);
  const part: DocumentPart = { type: "document", source };
  const title = given("filename")?.string();
  if (title !== undefined) part.title = title;
  return part;
}

/** An assistant message's `output_text` or `refusal` part. */
function assistantPart(p: Fields): Part {
  const type = p.oneOf("type", ASSISTANT_PARTS);
  if (type === "refusal") return { type: "refusal", text: p.string("refusal") };
  p.array("annotations", OPTIONAL);
  p.array("logprobs", OPTIONAL);
  return { type: "text", text: p.string("text") };
}
