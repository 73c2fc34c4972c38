/**
 * A fake OpenAI-compatible upstream: `POST /v1/chat/completions` checked against OpenAI's
 * documented request format (unknown fields, message order, tool-call pairing, and the
 * gateway's own promise to always ask for streamed usage), answered byte for byte the way
 * OpenAI answers: JSON, or `data:` chunks with `usage: null`, the usage chunk and `[DONE]`;
 * with `system_fingerprint`, `service_tier`, token details, `logprobs` when asked, and (per
 * its {@link OpenAIFlavour}) reasoning the way DeepSeek or OpenRouter send it, a refusal, or
 * cached prompt tokens. What it received is in `received` (`last.body`).
 * It also serves `/v1/moderations` (fake_openai_moderation.ts), `/v1/embeddings`
 * (fake_openai_embeddings.ts), `/v1/images/generations` (fake_openai_images.ts), and vLLM's
 * `/v1/rerank` and TEI's `/rerank` (fake_rerank.ts).
 */
import {
  type Conversation,
  fragments,
  generate,
  type Generation,
  type ReceivedImage,
  type Script,
  sniffImage,
  tokenize,
  type Turn,
} from "./fake_model.ts";
import { FAKE_API_KEY, type FakeOptions, type FakeStyle, FakeUpstream } from "./fake_upstream.ts";
import { embeddingsRoute } from "./fake_openai_embeddings.ts";
import { rerankRoutes } from "./fake_rerank.ts";
import { imagesRoute } from "./fake_openai_images.ts";
import { moderationRoute } from "./fake_openai_moderation.ts";
import { OPENAI_LISTING, openAIListRoute } from "./fake_model_lists.ts";

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
  "prediction",
  "modalities",
  "audio",
  "web_search_options",
  "verbosity",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
  "safety_identifier",
  "moderation",
  "functions",
  "function_call",
]);

/** The fields each message role may have (OpenAI: "Additional properties are not allowed"). */
const MESSAGE_FIELDS: Record<string, readonly string[]> = {
  system: ["role", "content", "name"],
  developer: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: ["role", "content", "name", "tool_calls", "refusal", "audio", "function_call"],
  tool: ["role", "content", "tool_call_id"],
};

const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

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
  bad.push(...checkOptions(body));
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
    for (const key of Object.keys(m)) {
      if (!(MESSAGE_FIELDS[m.role as string] ?? [key]).includes(key)) {
        bad.push(`Additional properties are not allowed ('${key}' was unexpected) - '${at}'`);
      }
    }
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
                // OpenAI downloads https URLs; one without a dotted host it could not reach.
                if (
                  !/^https:\/\/[^/]+\.[^/]+\//.test(p.image_url.url) &&
                  decodeDataUrl(p.image_url.url) === null
                ) {
                  bad.push(
                    `${at}.content[${j}].image_url.url: not an image data URL or a URL OpenAI can download`,
                  );
                }
                return;
              }
              if (isObj(p) && p.type === "file" && isObj(p.file)) {
                return checkFilePart(p.file, `${at}.content[${j}].file`, bad);
              }
              bad.push(`${at}.content[${j}]: invalid part`);
            });
          }
        }
        break;
      case "assistant": {
        const calls = m.tool_calls;
        if (m.refusal !== undefined && m.refusal !== null && typeof m.refusal !== "string") {
          bad.push(`${at}.refusal: a string`);
        }
        if (m.content !== null && m.content !== undefined) {
          checkText(m.content, `${at}.content`, bad, true);
        } else if (!Array.isArray(calls) && typeof m.refusal !== "string") {
          bad.push(`${at}: content, refusal or tool_calls required`);
        }
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

/** Checks a `file` part as OpenAI documents it: a `file_id`, or `file_data` (a base64 data URL)
 * with the `filename` OpenAI requires beside it. */
function checkFilePart(file: Obj, at: string, bad: string[]): void {
  for (const key of Object.keys(file)) {
    if (!["file_data", "file_id", "filename"].includes(key)) {
      bad.push(`${at}.${key}: Unrecognized request argument supplied`);
    }
  }
  if (typeof file.file_id === "string") return;
  if (typeof file.file_data !== "string" || !/^data:[\w/.+-]+;base64,/.test(file.file_data)) {
    return void bad.push(`${at}.file_data: a base64 data URL (or a file_id) required`);
  }
  if (typeof file.filename !== "string" || file.filename === "") {
    bad.push(`${at}.filename: Missing required parameter (a filename with file_data)`);
  }
}

/** A string or text parts (an assistant's may be refusal parts too). */
function checkText(content: unknown, at: string, bad: string[], refusals = false): void {
  if (typeof content === "string") return;
  const ok = (p: unknown) =>
    isObj(p) && (p.type === "text" && typeof p.text === "string" ||
      refusals && p.type === "refusal" && typeof p.refusal === "string");
  if (!Array.isArray(content) || !content.every(ok)) bad.push(`${at}: a string or text parts`);
}

/** Checks the generation options OpenAI validates; returns what is wrong. */
function checkOptions(body: Obj): string[] {
  const bad: string[] = [];
  const number = (key: string, min: number, max: number) => {
    const v = body[key];
    if (v !== undefined && (typeof v !== "number" || v < min || v > max)) {
      bad.push(`${key}: must be a number in [${min}, ${max}]`);
    }
  };
  number("top_p", 0, 1);
  number("presence_penalty", -2, 2);
  number("frequency_penalty", -2, 2);
  if (body.seed !== undefined && !Number.isInteger(body.seed)) bad.push("seed: an integer");
  if (body.user !== undefined && typeof body.user !== "string") bad.push("user: a string");
  const metadata = body.metadata;
  if (
    metadata !== undefined &&
    (!isObj(metadata) || Object.values(metadata).some((v) => typeof v !== "string"))
  ) bad.push("metadata: an object of strings");
  if (body.reasoning_effort !== undefined && !EFFORTS.includes(body.reasoning_effort as string)) {
    bad.push(`reasoning_effort: one of ${EFFORTS.join(", ")}`);
  }
  const format = body.response_format;
  if (format !== undefined) {
    if (!isObj(format) || !["text", "json_object", "json_schema"].includes(format.type as string)) {
      bad.push("response_format: {type: text | json_object | json_schema}");
    } else if (format.type === "json_schema") {
      const js = format.json_schema;
      if (
        !isObj(js) || typeof js.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(js.name) ||
        (js.schema !== undefined && !isObj(js.schema)) ||
        (js.strict !== undefined && js.strict !== null && typeof js.strict !== "boolean") ||
        Object.keys(js).some((k) => !["name", "description", "schema", "strict"].includes(k))
      ) bad.push("response_format.json_schema: {name, description?, schema?, strict?}");
    } else if (Object.keys(format).length > 1) bad.push("response_format: only type");
  }
  if (body.logprobs !== undefined && typeof body.logprobs !== "boolean") {
    bad.push("logprobs: a boolean");
  }
  const top = body.top_logprobs;
  if (top !== undefined) {
    if (!Number.isInteger(top) || (top as number) < 0 || (top as number) > 20) {
      bad.push("top_logprobs: an integer in [0, 20]");
    }
    if (body.logprobs !== true) bad.push("top_logprobs: logprobs must be set to true");
  }
  if (body.parallel_tool_calls !== undefined) {
    if (typeof body.parallel_tool_calls !== "boolean") bad.push("parallel_tool_calls: boolean");
    if (body.tools === undefined) {
      bad.push("parallel_tool_calls is only allowed when 'tools' are specified");
    }
  }
  const tier = body.service_tier;
  if (
    tier !== undefined && !["auto", "default", "flex", "scale", "priority"].includes(tier as string)
  ) {
    bad.push("service_tier: auto, default, flex, scale or priority");
  }
  return bad;
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

/** An image part as the model sees it: a data URL decoded; a URL (never fetched) as an image
 * of type `url` and 0 bytes. */
function receivedImage(url: string): ReceivedImage {
  return url.startsWith("https://") ? { mediaType: "url", bytes: 0 } : decodeDataUrl(url)!;
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
          else if (p.type === "image_url") {
            t.images.push(receivedImage((p.image_url as Obj).url as string));
          }
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

/** How the fake's model answers beyond its script; a test may change it between calls. */
export interface OpenAIFlavour {
  /** Reasoning before the answer, counted as reasoning tokens. */
  reasoning?: string;
  /** Where reasoning goes: `reasoning_content` (DeepSeek, vLLM; the default) or `reasoning`
   * (OpenRouter, Ollama). */
  reasoningField?: "reasoning_content" | "reasoning";
  /** A refusal instead of the script's answer (content null, finish `stop`). */
  refusal?: string;
  /** Prompt tokens reported as read from the prompt cache (at most the prompt). */
  cachedTokens?: number;
}

/** One answer, before it is written as JSON or as chunks. */
interface Rendered {
  text: string[];
  reasoning: string[];
  reasoningField: string;
  refusal: string[];
  calls: Generation["toolCalls"];
  finish: string;
  usage: Obj;
  /** `top_logprobs` when the request asked for logprobs, else `null`. */
  logprobs: number | null;
  serviceTier: string;
}

function render(body: Obj, g: Generation, flavour: OpenAIFlavour): Rendered {
  const refusal = flavour.refusal === undefined ? [] : tokenize(flavour.refusal);
  const reasoning = flavour.reasoning === undefined ? [] : tokenize(flavour.reasoning);
  const refused = refusal.length > 0;
  const completion = (refused ? refusal.length : g.completionTokens) + reasoning.length;
  const tier = body.service_tier;
  return {
    text: refused ? [] : g.pieces,
    reasoning,
    reasoningField: flavour.reasoningField ?? "reasoning_content",
    refusal,
    calls: refused ? [] : g.toolCalls,
    finish: refused ? "stop" : g.finish === "stop_sequence" ? "stop" : g.finish,
    usage: {
      prompt_tokens: g.promptTokens,
      completion_tokens: completion,
      total_tokens: g.promptTokens + completion,
      prompt_tokens_details: {
        cached_tokens: Math.min(flavour.cachedTokens ?? 0, g.promptTokens),
        audio_tokens: 0,
      },
      completion_tokens_details: {
        reasoning_tokens: reasoning.length,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    logprobs: body.logprobs === true ? (body.top_logprobs as number | undefined) ?? 0 : null,
    serviceTier: tier === "flex" || tier === "priority" ? tier : "default",
  };
}

/** OpenAI's logprob entry for one token (every token the fake writes is 0.25 nats unsure). */
function logprob(token: string, top: number): Obj {
  const entry = { token, logprob: -0.25, bytes: [...new TextEncoder().encode(token)] };
  return { ...entry, top_logprobs: Array.from({ length: top }, () => entry) };
}

/** Renders an answer as OpenAI's non-streamed completion. */
function openAICompletion(id: string, model: string, r: Rendered): Obj {
  const message: Obj = {
    role: "assistant",
    content: r.text.length === 0 && (r.calls.length > 0 || r.refusal.length > 0)
      ? null
      : r.text.join(""),
    refusal: r.refusal.length > 0 ? r.refusal.join("") : null,
    annotations: [],
  };
  if (r.reasoning.length > 0) message[r.reasoningField] = r.reasoning.join("");
  if (r.calls.length > 0) {
    message.tool_calls = r.calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  const top = r.logprobs;
  const logprobs = top === null ? null : {
    content: r.refusal.length > 0 ? null : r.text.map((t) => logprob(t, top)),
    refusal: r.refusal.length > 0 ? r.refusal.map((t) => logprob(t, top)) : null,
  };
  return {
    id,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message, logprobs, finish_reason: r.finish }],
    usage: r.usage,
    service_tier: r.serviceTier,
    system_fingerprint: "fp_fake0001",
  };
}

/** Renders an answer as OpenAI's SSE events (each `data: …\n\n`): reasoning pieces (with
 * `content` null, as DeepSeek writes them, or `""`, as OpenRouter does), then text or refusal
 * pieces, then tool calls (header fragment, then argument pieces), the finish chunk, the usage
 * chunk when asked and `[DONE]`; each chunk with its `obfuscation` padding unless turned off. */
function openAIStreamEvents(
  id: string,
  model: string,
  r: Rendered,
  options: { includeUsage: boolean; obfuscation: boolean },
) {
  const base = { id, object: "chat.completion.chunk", created: CREATED, model };
  let roleSent = false;
  const chunk = (delta: Obj, finish: string | null = null, logprobs: Obj | null = null) => {
    if (!roleSent) delta = { role: "assistant", ...delta };
    roleSent = true;
    const c: Obj = {
      ...base,
      service_tier: r.serviceTier,
      system_fingerprint: "fp_fake0001",
      choices: [{ index: 0, delta, logprobs, finish_reason: finish }],
    };
    if (options.includeUsage) c.usage = null;
    if (options.obfuscation) c.obfuscation = "x".repeat(3 + JSON.stringify(delta).length % 7);
    return `data: ${JSON.stringify(c)}\n\n`;
  };
  const lp = (token: string, kind: "content" | "refusal") =>
    r.logprobs === null ? null : {
      content: kind === "content" ? [logprob(token, r.logprobs)] : null,
      refusal: kind === "refusal" ? [logprob(token, r.logprobs)] : null,
    };
  const events: string[] = [];
  const field = r.reasoningField;
  const quiet = field === "reasoning_content" ? null : "";
  if (r.reasoning.length > 0) {
    events.push(chunk({ content: quiet, [field]: "" }));
    for (const piece of r.reasoning) events.push(chunk({ content: quiet, [field]: piece }));
  }
  if (r.refusal.length > 0) {
    events.push(chunk({ content: null, refusal: "" }));
    for (const piece of r.refusal) {
      events.push(chunk({ refusal: piece }, null, lp(piece, "refusal")));
    }
  } else if (r.text.length > 0 || r.calls.length === 0) {
    if (!roleSent) events.push(chunk({ content: "", refusal: null }));
    for (const piece of r.text) {
      const delta: Obj = { content: piece };
      if (r.reasoning.length > 0) delta[field] = null;
      events.push(chunk(delta, null, lp(piece, "content")));
    }
  }
  r.calls.forEach((call, i) => {
    const header = {
      index: i,
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: "" },
    };
    events.push(
      chunk(
        roleSent
          ? { tool_calls: [header] }
          : { content: null, tool_calls: [header], refusal: null },
      ),
    );
    for (const piece of fragments(call.arguments, 7)) {
      events.push(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
    }
  });
  events.push(chunk({}, r.finish));
  if (options.includeUsage) {
    const usage: Obj = { ...base, choices: [], usage: r.usage };
    if (options.obfuscation) usage.obfuscation = "xyz";
    events.push(`data: ${JSON.stringify(usage)}\n\n`);
  }
  events.push("data: [DONE]\n\n");
  return events;
}

/** Options of {@link startFakeOpenAI}. */
export interface FakeOpenAIOptions extends FakeOptions {
  /** Models it knows; others get OpenAI's 404 `model_not_found`. Default: any. */
  models?: string[];
  /** How it answers at first (see {@link FakeOpenAI.flavour}). */
  flavour?: OpenAIFlavour;
}

/** A running fake OpenAI upstream. */
export interface FakeOpenAI extends FakeUpstream {
  /** How the model answers beyond its script, for the next requests. */
  flavour: OpenAIFlavour;
}

/** Starts a fake OpenAI-compatible upstream on a free port; its `url` + `/v1` is a base_url. */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  const flavour: OpenAIFlavour = { ...options.flavour };
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
      const answer = render(body, g, fake.flavour);
      if (body.stream !== true) {
        return { kind: "json", status: 200, body: openAICompletion(id, model, answer) };
      }
      const stream = isObj(body.stream_options) ? body.stream_options : {};
      return {
        kind: "stream",
        events: openAIStreamEvents(id, model, answer, {
          includeUsage: stream.include_usage === true,
          obfuscation: stream.include_obfuscation !== false,
        }),
      };
    },
    errorBody,
    routes: {
      "/v1/moderations": moderationRoute(apiKey, errorBody),
      "/v1/embeddings": embeddingsRoute(apiKey, errorBody),
      "/v1/images/generations": imagesRoute(apiKey),
      "/v1/models": openAIListRoute(apiKey, () => fake),
      ...rerankRoutes(apiKey, errorBody),
    },
    streamError: (type, message) =>
      `data: ${JSON.stringify({ error: { message, type, param: null, code: null } })}\n\n`,
  };
  const fake = Object.assign(new FakeUpstream(style, { ...options, apiKey }), { flavour });
  fake.listing = structuredClone([...OPENAI_LISTING]);
  return fake;
}
