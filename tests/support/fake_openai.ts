/**
 * A fake OpenAI-compatible upstream: `POST /v1/chat/completions` checked against OpenAI's
 * documented request format (unknown fields, message order, tool-call pairing, and the
 * gateway's own promise to always ask for streamed usage), answered byte for byte the way
 * OpenAI answers: JSON, or `data:` chunks with `usage: null`, the usage chunk and `[DONE]`.
 * It also serves `/v1/moderations` (fake_openai_moderation.ts) and `/v1/images/generations`
 * (fake_openai_images.ts).
 */
import {
  type Conversation,
  fragments,
  generate,
  type Generation,
  type ReceivedImage,
  type Script,
  sniffImage,
  type Turn,
} from "./fake_model.ts";
import { FAKE_API_KEY, type FakeOptions, type FakeStyle, FakeUpstream } from "./fake_upstream.ts";
import { imagesRoute } from "./fake_openai_images.ts";
import { moderationRoute } from "./fake_openai_moderation.ts";

type Obj = Record<string, unknown>;

const TOP_LEVEL = new Set([
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "n",
  "stream",
  "stream_options",
  "stop",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "user",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "service_tier",
  "metadata",
  "store",
  "reasoning_effort",
]);

/** The `created` time the fake's answers carry. */
export const CREATED = 1_767_225_600;

/** Whether a parsed JSON value is an object (not an array or null). */
export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks the headers of any OpenAI request (the key, a JSON body); returns what is wrong. */
export function checkOpenAIHeaders(headers: Headers, apiKey: string): string[] {
  const bad: string[] = [];
  if (headers.get("authorization") !== `Bearer ${apiKey}`) {
    bad.push(`auth: authorization header is ${JSON.stringify(headers.get("authorization"))}`);
  }
  if (!headers.get("content-type")?.startsWith("application/json")) {
    bad.push("content-type is not application/json");
  }
  return bad;
}

/** Checks a chat completion request; returns what is wrong with it. */
export function checkOpenAIRequest(headers: Headers, body: unknown, apiKey: string): string[] {
  const bad = checkOpenAIHeaders(headers, apiKey);
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) bad.push(`Unrecognized request argument supplied: ${key}`);
  }
  if (typeof body.model !== "string" || body.model === "") bad.push("model: must be a string");
  if ("max_tokens" in body && "max_completion_tokens" in body) {
    bad.push("max_tokens and max_completion_tokens are both set");
  }
  for (const key of ["max_tokens", "max_completion_tokens"]) {
    const v = body[key];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < 1)) {
      bad.push(`${key}: must be a positive integer`);
    }
  }
  const t = body.temperature;
  if (t !== undefined && (typeof t !== "number" || t < 0 || t > 2)) {
    bad.push("temperature: must be a number in [0, 2]");
  }
  if (body.stream !== undefined && typeof body.stream !== "boolean") bad.push("stream: boolean");
  if (body.stream_options !== undefined && body.stream !== true) {
    bad.push("stream_options: only allowed when stream is true");
  }
  if (body.stream === true) {
    const so = body.stream_options;
    if (!isObj(so) || so.include_usage !== true) {
      bad.push("gateway contract: streams must ask for stream_options.include_usage");
    }
  }
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== "string") {
    if (!Array.isArray(stop) || stop.length > 4 || stop.some((s) => typeof s !== "string")) {
      bad.push("stop: a string or up to 4 strings");
    }
  }
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) bad.push("tools: must be an array");
    else {
      body.tools.forEach((tool, i) => {
        const fn = isObj(tool) ? tool.function : undefined;
        if (!isObj(tool) || tool.type !== "function" || !isObj(fn)) {
          return void bad.push(`tools[${i}]: {type: "function", function: {...}}`);
        }
        if (typeof fn.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(fn.name)) {
          bad.push(`tools[${i}].function.name: invalid`);
        } else toolNames.add(fn.name);
        if (fn.parameters !== undefined && !isObj(fn.parameters)) {
          bad.push(`tools[${i}].function.parameters: must be an object`);
        }
        for (const key of Object.keys(fn)) {
          if (!["name", "description", "parameters", "strict"].includes(key)) {
            bad.push(`tools[${i}].function.${key}: unknown`);
          }
        }
      });
    }
  }
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (body.tools === undefined) bad.push("tool_choice: only allowed when tools are specified");
    const named = isObj(choice) && choice.type === "function" && isObj(choice.function) &&
      typeof choice.function.name === "string";
    if (!named && !["none", "auto", "required"].includes(choice as string)) {
      bad.push("tool_choice: invalid");
    }
    if (named && !toolNames.has((choice.function as Obj).name as string)) {
      bad.push("tool_choice: names a tool that is not in tools");
    }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return [...bad, "messages: must be a non-empty array"];
  }
  let pending: Set<string> | null = null;
  body.messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObj(m)) return void bad.push(`${at}: not an object`);
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string") bad.push(`${at}.tool_call_id: required`);
      else if (!pending?.delete(m.tool_call_id)) {
        bad.push(`${at}: tool message does not answer a preceding tool call`);
      }
      checkText(m.content, `${at}.content`, bad);
      return;
    }
    if (pending !== null && pending.size > 0) {
      bad.push(
        `${at}: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'`,
      );
    }
    pending = null;
    switch (m.role) {
      case "system":
      case "developer":
        checkText(m.content, `${at}.content`, bad);
        break;
      case "user":
        if (typeof m.content !== "string") {
          if (!Array.isArray(m.content)) bad.push(`${at}.content: string or parts`);
          else {
            m.content.forEach((p, j) => {
              if (isObj(p) && p.type === "text" && typeof p.text === "string") return;
              if (
                isObj(p) && p.type === "image_url" && isObj(p.image_url) &&
                typeof p.image_url.url === "string"
              ) {
                if (decodeDataUrl(p.image_url.url) === null) {
                  bad.push(`${at}.content[${j}].image_url.url: not an image data URL`);
                }
                return;
              }
              bad.push(`${at}.content[${j}]: invalid part`);
            });
          }
        }
        break;
      case "assistant": {
        const calls = m.tool_calls;
        if (m.content !== null && m.content !== undefined) {
          checkText(m.content, `${at}.content`, bad);
        } else if (!Array.isArray(calls)) bad.push(`${at}: content or tool_calls required`);
        if (calls !== undefined) {
          if (!Array.isArray(calls) || calls.length === 0) {
            bad.push(`${at}.tool_calls: non-empty array`);
          } else {
            pending = new Set();
            calls.forEach((c, j) => {
              const fn = isObj(c) ? c.function : undefined;
              if (
                !isObj(c) || typeof c.id !== "string" || c.type !== "function" || !isObj(fn) ||
                typeof fn.name !== "string" || typeof fn.arguments !== "string"
              ) {
                return void bad.push(`${at}.tool_calls[${j}]: invalid`);
              }
              pending!.add(c.id);
            });
          }
        }
        break;
      }
      default:
        bad.push(`${at}.role: invalid ${JSON.stringify(m.role)}`);
    }
  });
  return bad;
}

function checkText(content: unknown, at: string, bad: string[]): void {
  if (typeof content === "string") return;
  if (
    !Array.isArray(content) ||
    content.some((p) => !isObj(p) || p.type !== "text" || typeof p.text !== "string")
  ) {
    bad.push(`${at}: a string or text parts`);
  }
}

/** The media type and bytes of a base64 image data URL whose bytes start like an image. */
export function imageDataUrlBytes(url: string): { mediaType: string; bytes: Uint8Array } | null {
  const m = /^data:(image\/[a-z0-9.+-]+);base64,(.*)$/s.exec(url);
  if (!m) return null;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(m[2]!), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  const mediaType = sniffImage(bytes);
  return mediaType === null ? null : { mediaType, bytes };
}

function decodeDataUrl(url: string): ReceivedImage | null {
  const image = imageDataUrlBytes(url);
  return image && { mediaType: image.mediaType, bytes: image.bytes.length };
}

function textOf(content: unknown): string[] {
  if (typeof content === "string") return content === "" ? [] : [content];
  if (!Array.isArray(content)) return [];
  return content.filter((p) => isObj(p) && p.type === "text").map((p) => (p as Obj).text as string);
}

/** The provider-neutral conversation of a (valid) OpenAI request. */
export function openAIConversation(body: Obj): Conversation {
  const system: string[] = [];
  const turns: Turn[] = [];
  const turn = (role: Turn["role"]): Turn => {
    const last = turns.at(-1);
    if (last?.role === role) return last;
    const t: Turn = { role, texts: [], images: [], toolCalls: [], toolResults: [] };
    turns.push(t);
    return t;
  };
  for (const m of body.messages as Obj[]) {
    if (m.role === "system" || m.role === "developer") system.push(...textOf(m.content));
    else if (m.role === "tool") {
      turn("user").toolResults.push({
        id: m.tool_call_id as string,
        text: textOf(m.content).join(""),
      });
    } else if (m.role === "user") {
      const t = turn("user");
      if (typeof m.content === "string") t.texts.push(...textOf(m.content));
      else {
        for (const p of m.content as Obj[]) {
          if (p.type === "text") t.texts.push(...textOf(p.text));
          else t.images.push(decodeDataUrl((p.image_url as Obj).url as string)!);
        }
      }
    } else {
      const t = turn("assistant");
      t.texts.push(...textOf(m.content));
      for (const c of (m.tool_calls ?? []) as Obj[]) {
        const fn = c.function as Obj;
        t.toolCalls.push({
          id: c.id as string,
          name: fn.name as string,
          arguments: JSON.parse((fn.arguments as string) || "{}"),
        });
      }
    }
  }
  const choice = body.tool_choice;
  return {
    model: body.model as string,
    system,
    turns,
    tools: ((body.tools ?? []) as Obj[]).map((t) => {
      const fn = t.function as Obj;
      return {
        name: fn.name as string,
        description: (fn.description as string | undefined) ?? null,
        parameters: (fn.parameters as Obj | undefined) ?? {},
      };
    }),
    toolChoice: isObj(choice)
      ? { name: (choice.function as Obj).name as string }
      : (choice as Conversation["toolChoice"] | undefined) ?? "auto",
    maxTokens: (body.max_completion_tokens ?? body.max_tokens ?? 4096) as number,
    stop: typeof body.stop === "string" ? [body.stop] : (body.stop ?? []) as string[],
    temperature: (body.temperature as number | undefined) ?? null,
  };
}

function finishOf(g: Generation): string {
  return g.finish === "stop_sequence" ? "stop" : g.finish;
}

function usageOf(g: Generation) {
  return {
    prompt_tokens: g.promptTokens,
    completion_tokens: g.completionTokens,
    total_tokens: g.promptTokens + g.completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** Renders a generation as OpenAI's non-streamed completion. */
export function openAICompletion(id: string, model: string, g: Generation): Obj {
  const message: Obj = {
    role: "assistant",
    content: g.pieces.length === 0 && g.toolCalls.length > 0 ? null : g.pieces.join(""),
    refusal: null,
    annotations: [],
  };
  if (g.toolCalls.length > 0) {
    message.tool_calls = g.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(g) }],
    usage: usageOf(g),
    service_tier: "default",
    system_fingerprint: "fp_fake0001",
  };
}

/** Renders a generation as OpenAI's SSE events (each `data: …\n\n`). */
export function openAIStreamEvents(
  id: string,
  model: string,
  g: Generation,
  includeUsage: boolean,
): string[] {
  const base = { id, object: "chat.completion.chunk", created: CREATED, model };
  const chunk = (delta: Obj, finish: string | null = null) => {
    const c: Obj = {
      ...base,
      service_tier: "default",
      system_fingerprint: "fp_fake0001",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (includeUsage) c.usage = null;
    return `data: ${JSON.stringify(c)}\n\n`;
  };
  const events: string[] = [];
  const header = (i: number) => {
    const c = g.toolCalls[i]!;
    return { index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } };
  };
  if (g.pieces.length > 0 || g.toolCalls.length === 0) {
    events.push(chunk({ role: "assistant", content: "", refusal: null }));
    for (const piece of g.pieces) events.push(chunk({ content: piece }));
  }
  g.toolCalls.forEach((call, i) => {
    if (i === 0 && g.pieces.length === 0) {
      events.push(
        chunk({ role: "assistant", content: null, tool_calls: [header(0)], refusal: null }),
      );
    } else events.push(chunk({ tool_calls: [header(i)] }));
    for (const piece of fragments(call.arguments, 7)) {
      events.push(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
    }
  });
  events.push(chunk({}, finishOf(g)));
  if (includeUsage) {
    events.push(`data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(g) })}\n\n`);
  }
  events.push("data: [DONE]\n\n");
  return events;
}

/** Options of {@link startFakeOpenAI}. */
export interface FakeOpenAIOptions extends FakeOptions {
  /** Models it knows; others get OpenAI's 404 `model_not_found`. Default: any. */
  models?: string[];
}

/** Starts a fake OpenAI-compatible upstream on a free port; its `url` + `/v1` is a base_url. */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): FakeUpstream {
  let calls = 0;
  let completions = 0;
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const errorBody = (_status: number, type: string, message: string, code?: string) => ({
    error: { message, type, param: null, code: code ?? null },
  });
  const style: FakeStyle = {
    path: "/v1/chat/completions",
    check: (headers, body) => checkOpenAIRequest(headers, body, apiKey),
    answer(body, script: Script) {
      const model = body.model as string;
      if (options.models && !options.models.includes(model)) {
        return {
          kind: "json",
          status: 404,
          body: style.errorBody(
            404,
            "invalid_request_error",
            `The model \`${model}\` does not exist or you do not have access to it.`,
            "model_not_found",
          ),
        };
      }
      const conversation = openAIConversation(body);
      const g = generate(
        conversation,
        script(conversation),
        () => `call_fake${String(++calls).padStart(20, "0")}`,
      );
      const id = `chatcmpl-fake${++completions}`;
      if (body.stream !== true) {
        return { kind: "json", status: 200, body: openAICompletion(id, model, g) };
      }
      const includeUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
      return { kind: "stream", events: openAIStreamEvents(id, model, g, includeUsage) };
    },
    errorBody,
    routes: {
      "/v1/moderations": moderationRoute(apiKey, errorBody),
      "/v1/images/generations": imagesRoute(apiKey),
    },
    streamError: (type, message) =>
      `data: ${JSON.stringify({ error: { message, type, param: null, code: null } })}\n\n`,
  };
  return new FakeUpstream(style, { ...options, apiKey });
}
