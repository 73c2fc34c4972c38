/**
 * A fake Anthropic upstream: `POST /v1/messages` checked against the Messages API's documented
 * rules (headers, required `max_tokens`, user/assistant roles only, no blank text blocks,
 * base64 image sources whose bytes match their media type, tool_use answered by tool_result
 * blocks first in the very next user turn, 0–1 temperature, unknown fields rejected), answered
 * byte for byte the way Anthropic answers: JSON, or the named SSE event sequence.
 */
import {
  type Conversation,
  fragments,
  generate,
  type Generation,
  type Script,
  sniffImage,
  type Turn,
} from "./fake_model.ts";
import { FAKE_API_KEY, type FakeOptions, type FakeStyle, FakeUpstream } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

const TOP_LEVEL = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "tools",
  "tool_choice",
  "metadata",
  "stream",
  "thinking",
  "service_tier",
]);
const MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function keysAllowed(obj: Obj, allowed: string[], at: string, bad: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) bad.push(`${at}.${key}: Extra inputs are not permitted`);
  }
}

function checkTextBlock(block: Obj, at: string, bad: string[]): void {
  keysAllowed(block, ["type", "text", "cache_control"], at, bad);
  if (typeof block.text !== "string" || block.text.trim() === "") {
    bad.push(`${at}: text content blocks must contain non-whitespace text`);
  }
}

/** Checks a Messages API request; returns what is wrong with it. */
export function checkAnthropicRequest(
  headers: Headers,
  body: unknown,
  apiKey: string,
  version: string,
): string[] {
  const bad: string[] = [];
  if (headers.get("x-api-key") !== apiKey) bad.push("auth: x-api-key is wrong or missing");
  if (headers.has("authorization")) bad.push("an Authorization header was sent to Anthropic");
  if (headers.get("anthropic-version") !== version) {
    bad.push(`anthropic-version: ${JSON.stringify(headers.get("anthropic-version"))}`);
  }
  if (!headers.get("content-type")?.startsWith("application/json")) {
    bad.push("content-type is not application/json");
  }
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) bad.push(`${key}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== "string" || body.model === "") bad.push("model: Field required");
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    bad.push("max_tokens: Field required (a positive integer)");
  }
  const t = body.temperature;
  if (t !== undefined && (typeof t !== "number" || t < 0 || t > 1)) {
    bad.push("temperature: Input should be less than or equal to 1");
  }
  if (body.stream !== undefined && typeof body.stream !== "boolean") bad.push("stream: boolean");
  if (body.stop_sequences !== undefined) {
    const s = body.stop_sequences;
    if (!Array.isArray(s) || s.some((x) => typeof x !== "string" || x.trim() === "")) {
      bad.push("stop_sequences: strings with non-whitespace text");
    }
  }
  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      body.system.forEach((b, i) =>
        isObj(b) && b.type === "text"
          ? checkTextBlock(b, `system[${i}]`, bad)
          : bad.push(`system[${i}]: text blocks only`)
      );
    } else if (typeof body.system !== "string") bad.push("system: string or text blocks");
  }
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) bad.push("tools: must be an array");
    else {
      body.tools.forEach((tool, i) => {
        if (!isObj(tool)) return void bad.push(`tools[${i}]: not an object`);
        keysAllowed(
          tool,
          ["name", "description", "input_schema", "cache_control"],
          `tools[${i}]`,
          bad,
        );
        if (typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
          bad.push(`tools[${i}].name: invalid`);
        } else toolNames.add(tool.name);
        if (!isObj(tool.input_schema) || tool.input_schema.type !== "object") {
          bad.push(`tools[${i}].input_schema: Input tag must be an object schema (type "object")`);
        }
      });
    }
  }
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (body.tools === undefined) {
      bad.push("tool_choice: may only be specified while providing tools");
    }
    if (!isObj(choice) || !["auto", "any", "tool", "none"].includes(choice.type as string)) {
      bad.push("tool_choice.type: auto, any, tool or none");
    } else {
      const allowed = choice.type === "tool"
        ? ["type", "name", "disable_parallel_tool_use"]
        : choice.type === "none"
        ? ["type"]
        : ["type", "disable_parallel_tool_use"];
      keysAllowed(choice, allowed, "tool_choice", bad);
      if (choice.type === "tool" && !toolNames.has(choice.name as string)) {
        bad.push("tool_choice.name: not one of the tools");
      }
    }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return [...bad, "messages: at least one message is required"];
  }
  let previous: Obj | null = null;
  body.messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObj(m)) return void bad.push(`${at}: not an object`);
    keysAllowed(m, ["role", "content"], at, bad);
    if (m.role !== "user" && m.role !== "assistant") {
      bad.push(`${at}.role: Input should be 'user' or 'assistant'`);
    }
    if (previous?.role === m.role) {
      bad.push(`${at}: consecutive ${m.role} messages (the gateway should merge them)`);
    }
    const blocks = typeof m.content === "string"
      ? (m.content.trim() === "" ? [] : [{ type: "text", text: m.content }])
      : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) {
      bad.push(`${at}: all messages must have non-empty content`);
      previous = m;
      return;
    }
    const uses = previous?.role === "assistant" ? toolUseIds(previous) : new Set<string>();
    let seenOther = false;
    blocks.forEach((b, j) => {
      const bat = `${at}.content[${j}]`;
      if (!isObj(b)) return void bad.push(`${bat}: not an object`);
      switch (b.type) {
        case "text":
          seenOther = true;
          return checkTextBlock(b, bat, bad);
        case "image": {
          seenOther = true;
          if (m.role !== "user") bad.push(`${bat}: images only in user messages`);
          keysAllowed(b, ["type", "source", "cache_control"], bat, bad);
          const src = b.source;
          if (!isObj(src) || src.type !== "base64" || typeof src.data !== "string") {
            return void bad.push(`${bat}.source: {type: "base64", media_type, data}`);
          }
          if (!MEDIA_TYPES.includes(src.media_type as string)) {
            return void bad.push(`${bat}.source.media_type: ${JSON.stringify(src.media_type)}`);
          }
          const bytes = decodeBase64(src.data);
          if (bytes === null) return void bad.push(`${bat}.source.data: invalid base64`);
          if (sniffImage(bytes) !== src.media_type) {
            bad.push(`${bat}: Image does not match the provided media type ${src.media_type}`);
          }
          return;
        }
        case "tool_use":
          seenOther = true;
          keysAllowed(b, ["type", "id", "name", "input", "cache_control"], bat, bad);
          if (m.role !== "assistant") bad.push(`${bat}: tool_use only in assistant messages`);
          if (typeof b.id !== "string" || typeof b.name !== "string" || !isObj(b.input)) {
            bad.push(`${bat}: tool_use needs id, name and an input object`);
          }
          return;
        case "tool_result":
          keysAllowed(b, ["type", "tool_use_id", "content", "is_error", "cache_control"], bat, bad);
          if (m.role !== "user") bad.push(`${bat}: tool_result only in user messages`);
          if (seenOther) bad.push(`${bat}: tool_result blocks must come first in the message`);
          if (typeof b.tool_use_id !== "string" || !uses.delete(b.tool_use_id)) {
            bad.push(`${bat}: unexpected tool_use_id found in tool_result blocks`);
          }
          if (b.content !== undefined && typeof b.content !== "string") {
            if (!Array.isArray(b.content)) bad.push(`${bat}.content: string or blocks`);
            else {
              b.content.forEach((c, k) =>
                isObj(c) && c.type === "text"
                  ? checkTextBlock(c, `${bat}.content[${k}]`, bad)
                  : bad.push(`${bat}.content[${k}]: text blocks only`)
              );
            }
          }
          return;
        default:
          bad.push(`${bat}.type: unknown ${JSON.stringify(b.type)}`);
      }
    });
    if (uses.size > 0) {
      bad.push(
        `${at}: tool_use ids were found without tool_result blocks immediately after: ${
          [...uses].join(", ")
        }`,
      );
    }
    previous = m;
  });
  const last = previous as Obj | null;
  if (last?.role === "assistant" && toolUseIds(last).size > 0) {
    bad.push("the last assistant message has tool_use blocks without results");
  }
  return bad;
}

function toolUseIds(message: Obj): Set<string> {
  const ids = new Set<string>();
  if (!Array.isArray(message.content)) return ids;
  for (const b of message.content) {
    if (isObj(b) && b.type === "tool_use" && typeof b.id === "string") ids.add(b.id);
  }
  return ids;
}

function decodeBase64(data: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function blocksOf(content: unknown): Obj[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content as Obj[];
}

/** The provider-neutral conversation of a (valid) Messages request. */
export function anthropicConversation(body: Obj): Conversation {
  const system = body.system === undefined
    ? []
    : typeof body.system === "string"
    ? [body.system]
    : (body.system as Obj[]).map((b) => b.text as string);
  const turns = (body.messages as Obj[]).map((m): Turn => {
    const turn: Turn = {
      role: m.role as Turn["role"],
      texts: [],
      images: [],
      toolCalls: [],
      toolResults: [],
    };
    for (const b of blocksOf(m.content)) {
      if (b.type === "text") turn.texts.push(b.text as string);
      else if (b.type === "image") {
        const src = b.source as Obj;
        turn.images.push({
          mediaType: src.media_type as string,
          bytes: decodeBase64(src.data as string)!.length,
        });
      } else if (b.type === "tool_use") {
        turn.toolCalls.push({
          id: b.id as string,
          name: b.name as string,
          arguments: b.input as Record<string, unknown>,
        });
      } else if (b.type === "tool_result") {
        const text = b.content === undefined
          ? ""
          : blocksOf(b.content).map((c) => c.text as string).join("");
        turn.toolResults.push({ id: b.tool_use_id as string, text });
      }
    }
    return turn;
  });
  const choice = body.tool_choice as Obj | undefined;
  return {
    model: body.model as string,
    system,
    turns,
    tools: ((body.tools ?? []) as Obj[]).map((t) => ({
      name: t.name as string,
      description: (t.description as string | undefined) ?? null,
      parameters: t.input_schema as Obj,
    })),
    toolChoice: choice === undefined
      ? "auto"
      : choice.type === "any"
      ? "required"
      : choice.type === "tool"
      ? { name: choice.name as string }
      : choice.type as "auto" | "none",
    maxTokens: body.max_tokens as number,
    stop: (body.stop_sequences ?? []) as string[],
    temperature: (body.temperature as number | undefined) ?? null,
  };
}

function stopReasonOf(g: Generation): string {
  return {
    stop: "end_turn",
    stop_sequence: "stop_sequence",
    length: "max_tokens",
    tool_calls: "tool_use",
  }[
    g.finish
  ];
}

/** Renders a generation as a non-streamed Messages API response. */
export function anthropicMessage(id: string, model: string, g: Generation): Obj {
  const content: Obj[] = [];
  if (g.pieces.length > 0) content.push({ type: "text", text: g.pieces.join("") });
  for (const c of g.toolCalls) {
    content.push({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) });
  }
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReasonOf(g),
    stop_sequence: g.stopSequence,
    usage: {
      input_tokens: g.promptTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: g.completionTokens,
      service_tier: "standard",
    },
  };
}

function event(data: Obj): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Renders a generation as the Messages API's SSE event sequence. */
export function anthropicStreamEvents(id: string, model: string, g: Generation): string[] {
  const events = [event({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: g.promptTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  })];
  let index = 0;
  let pinged = false;
  const ping = () => {
    if (!pinged) events.push(`event: ping\ndata: {"type": "ping"}\n\n`);
    pinged = true;
  };
  if (g.pieces.length > 0) {
    events.push(
      event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }),
    );
    ping();
    for (const text of g.pieces) {
      events.push(
        event({ type: "content_block_delta", index, delta: { type: "text_delta", text } }),
      );
    }
    events.push(event({ type: "content_block_stop", index }));
    index++;
  }
  for (const call of g.toolCalls) {
    events.push(event({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    }));
    ping();
    for (const partial_json of ["", ...fragments(call.arguments, 5)]) {
      events.push(event({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json },
      }));
    }
    events.push(event({ type: "content_block_stop", index }));
    index++;
  }
  events.push(event({
    type: "message_delta",
    delta: { stop_reason: stopReasonOf(g), stop_sequence: g.stopSequence },
    usage: { output_tokens: g.completionTokens },
  }));
  events.push(event({ type: "message_stop" }));
  return events;
}

/** Options of {@link startFakeAnthropic}. */
export interface FakeAnthropicOptions extends FakeOptions {
  /** The `anthropic-version` it requires. */
  version?: string;
  /** Models it knows; others get a 404 `not_found_error`. Default: any. */
  models?: string[];
}

/** Starts a fake Anthropic upstream on a free port; its `url` is a base_url. */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeUpstream {
  let calls = 0;
  let messages = 0;
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const version = options.version ?? "2023-06-01";
  const style: FakeStyle = {
    path: "/v1/messages",
    check: (headers, body) => checkAnthropicRequest(headers, body, apiKey, version),
    answer(body, script: Script) {
      const model = body.model as string;
      if (options.models && !options.models.includes(model)) {
        return {
          kind: "json",
          status: 404,
          body: style.errorBody(404, "not_found_error", `model: ${model}`),
        };
      }
      const conversation = anthropicConversation(body);
      const g = generate(
        conversation,
        script(conversation),
        () => `toolu_fake${String(++calls).padStart(16, "0")}`,
      );
      const id = `msg_fake${++messages}`;
      if (body.stream !== true) {
        return { kind: "json", status: 200, body: anthropicMessage(id, model, g) };
      }
      return { kind: "stream", events: anthropicStreamEvents(id, model, g) };
    },
    errorBody: (_status, type, message) => ({
      type: "error",
      error: { type, message },
      request_id: "req_fake0001",
    }),
    streamError: (type, message) =>
      `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`,
  };
  return new FakeUpstream(style, { ...options, apiKey });
}
