/**
 * A fake Anthropic upstream: `POST /v1/messages` checked against the Messages API's documented
 * rules (headers, required `max_tokens`, user/assistant roles only, no blank text blocks,
 * base64 image sources whose bytes match their media type or https URL sources, documents (a
 * PDF's base64 or https URL source, or a text source), tool_use answered by tool_result blocks
 * first in the very next user turn, 0–1 temperature, unknown
 * fields rejected; extended thinking with its budget, sampling and tool-choice rules, thinking
 * blocks first in assistant turns with their signatures checked, and mid tool loop a final
 * assistant turn that starts with one; `cache_control` on at most 4 blocks; structured outputs
 * only on models that have them, with the schema subset they accept), answered byte for byte
 * the way Anthropic answers: JSON, or the named SSE event sequence, with signed thinking,
 * redacted thinking, prompt-cache usage, refusals and paused turns.
 */
import { SchemaSampler } from "../../src/providers/simulator/schema_sample.ts";
import { FakePromptCache } from "./fake_anthropic_cache.ts";
import { ANTHROPIC_LISTING, anthropicListRoute } from "./fake_model_lists.ts";
import {
  FAKE_SIGNING_KEY,
  isRedactedThinkingData,
  redactedThinkingData,
  thinkingSignature,
} from "./fake_anthropic_signature.ts";
import {
  type Conversation,
  defaultScript,
  fragments,
  generate,
  type Generation,
  promptTokens,
  type Script,
  sniffImage,
  tokenize,
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
  "output_config",
  "service_tier",
]);
/** Tool fields of Anthropic's `Tool` beyond name, description, schema, cache marker and strict
 * (`@anthropic-ai/sdk` 1.12: tool search's `defer_loading`, programmatic calling's
 * `allowed_callers`, fine-grained streaming's `eager_input_streaming`, `input_examples`). */
const TOOL_EXTRAS = ["defer_loading", "allowed_callers", "eager_input_streaming", "input_examples"];
/** Top-level fields that a beta (named in `anthropic-beta`) admits. */
const BETA_FIELDS: Record<string, string> = { context_management: "context-management-2025-06-27" };
/** The beta that admits `role: "system"` messages in `messages` (BetaSystemMessageParam). */
export const MID_CONVERSATION_BETA = "mid-conversation-tool-changes-2026-07-01";

/** The API versions Anthropic answers: the one its docs name, and the one
 * `@anthropic-ai/sdk` 1.12 sends. */
export const ANTHROPIC_VERSIONS: readonly string[] = ["2023-06-01", "2026-10-21"];
const MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/** The user text that makes Anthropic answer with redacted thinking (its documented trigger). */
export const REDACTED_THINKING_TRIGGER =
  "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253";
/** Keywords structured outputs accept in a schema (others are a 400). */
const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "allOf",
  "$ref",
  "$defs",
  "definitions",
  "description",
  "title",
  "format",
  "minItems",
]);

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function keysAllowed(obj: Obj, allowed: string[], at: string, bad: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) bad.push(`${at}.${key}: Extra inputs are not permitted`);
  }
}

/** Claude's version in a model id (4.5 → 405), or `null` for a name without one. */
function claudeVersion(model: string): number | null {
  const m = /claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)/.exec(model) ??
    /claude-(\d+)(?:-(\d{1,2}))?-(?:opus|sonnet|haiku)/.exec(model);
  return m === null ? null : Number(m[1]) * 100 + Number(m[2] ?? 0);
}

/** What Anthropic's model matrix says a model accepts (a name without a version: a model
 * with budget thinking and nothing newer). */
function modelAccepts(model: string) {
  const v = claudeVersion(model);
  return {
    enabledThinking: v === null || (v >= 307 && v <= 406),
    adaptiveThinking: v !== null && v >= 406,
    structuredOutputs: v !== null && v >= 405,
    effort: v !== null && v >= 405,
    fixedSampling: v !== null && v >= 407,
  };
}

function checkCacheControl(block: Obj, at: string, bad: string[]): number {
  if (block.cache_control === undefined) return 0;
  const c = block.cache_control;
  if (!isObj(c) || c.type !== "ephemeral") {
    bad.push(`${at}.cache_control.type: Input should be 'ephemeral'`);
    return 1;
  }
  keysAllowed(c, ["type", "ttl"], `${at}.cache_control`, bad);
  if (c.ttl !== undefined && c.ttl !== "5m" && c.ttl !== "1h") {
    bad.push(`${at}.cache_control.ttl: Input should be '5m' or '1h'`);
  }
  return 1;
}

function checkTextBlock(block: Obj, at: string, bad: string[]): void {
  keysAllowed(block, ["type", "text", "cache_control", "citations"], at, bad);
  if (typeof block.text !== "string" || block.text.trim() === "") {
    bad.push(`${at}: text content blocks must contain non-whitespace text`);
  }
}

/** Checks a `{type: "url", url}` source: an https URL and nothing else. */
function checkUrlSource(src: Obj, bat: string, bad: string[]): void {
  keysAllowed(src, ["type", "url"], `${bat}.source`, bad);
  if (typeof src.url !== "string" || !src.url.startsWith("https://")) {
    bad.push(`${bat}.source.url: Only https URLs are supported`);
  }
}

function checkImageBlock(b: Obj, bat: string, bad: string[]): void {
  keysAllowed(b, ["type", "source", "cache_control"], bat, bad);
  const src = b.source;
  if (isObj(src) && src.type === "url") return checkUrlSource(src, bat, bad);
  if (!isObj(src) || src.type !== "base64" || typeof src.data !== "string") {
    return void bad.push(`${bat}.source: {type: "base64", media_type, data} or {type: "url", url}`);
  }
  if (!MEDIA_TYPES.includes(src.media_type as string)) {
    return void bad.push(`${bat}.source.media_type: ${JSON.stringify(src.media_type)}`);
  }
  const bytes = decodeBase64(src.data);
  if (bytes === null) return void bad.push(`${bat}.source.data: invalid base64`);
  if (sniffImage(bytes) !== src.media_type) {
    bad.push(`${bat}: Image does not match the provided media type ${src.media_type}`);
  }
}

/** Checks a document block: a PDF (base64 or https URL) or plain text source, with an optional
 * title, context and citations setting. */
function checkDocumentBlock(b: Obj, bat: string, bad: string[]): void {
  keysAllowed(b, ["type", "source", "title", "context", "citations", "cache_control"], bat, bad);
  for (const key of ["title", "context"]) {
    if (b[key] !== undefined && typeof b[key] !== "string") bad.push(`${bat}.${key}: string`);
  }
  if (
    b.citations !== undefined && !(isObj(b.citations) && typeof b.citations.enabled === "boolean")
  ) {
    bad.push(`${bat}.citations: {enabled: boolean}`);
  }
  const src = b.source;
  if (isObj(src) && src.type === "url") return checkUrlSource(src, bat, bad);
  if (isObj(src) && src.type === "text") {
    keysAllowed(src, ["type", "media_type", "data"], `${bat}.source`, bad);
    if (src.media_type !== "text/plain" || typeof src.data !== "string") {
      bad.push(`${bat}.source: {type: "text", media_type: "text/plain", data}`);
    }
    return;
  }
  if (!isObj(src) || src.type !== "base64" || typeof src.data !== "string") {
    return void bad.push(`${bat}.source: base64, url or text`);
  }
  keysAllowed(src, ["type", "media_type", "data"], `${bat}.source`, bad);
  if (src.media_type !== "application/pdf") {
    return void bad.push(`${bat}.source.media_type: ${JSON.stringify(src.media_type)}`);
  }
  const bytes = decodeBase64(src.data);
  if (bytes === null) return void bad.push(`${bat}.source.data: invalid base64`);
  if (new TextDecoder().decode(bytes.subarray(0, 5)) !== "%PDF-") {
    bad.push(`${bat}.source.data: The PDF specified was not valid.`);
  }
}

/** The ways a schema breaks the structured-outputs subset (at `at`). */
function strictSchemaViolations(schema: unknown, at: string, bad: string[]): void {
  if (typeof schema === "boolean") return;
  if (!isObj(schema)) return void bad.push(`${at}: a schema must be an object`);
  for (const [key, value] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(key)) {
      bad.push(`${at}: property '${key}' is not supported by structured outputs`);
    } else if (key === "minItems" && value !== 0 && value !== 1) {
      bad.push(`${at}.minItems: only 0 and 1 are supported`);
    }
  }
  const types = [schema.type].flat();
  if (types.includes("object") && schema.additionalProperties !== false) {
    bad.push(`${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
  }
  for (const key of ["properties", "$defs", "definitions"]) {
    if (isObj(schema[key])) {
      for (const [name, sub] of Object.entries(schema[key] as Obj)) {
        strictSchemaViolations(sub, `${at}.${key}.${name}`, bad);
      }
    }
  }
  if (schema.items !== undefined) strictSchemaViolations(schema.items, `${at}.items`, bad);
  for (const key of ["anyOf", "allOf"]) {
    if (Array.isArray(schema[key])) {
      (schema[key] as unknown[]).forEach((sub, i) =>
        strictSchemaViolations(sub, `${at}.${key}.${i}`, bad)
      );
    }
  }
}

/** Checks the request-level rules of thinking, sampling and structured outputs. */
function checkOptions(body: Obj, bad: string[]): void {
  const model = typeof body.model === "string" ? body.model : "";
  const accepts = modelAccepts(model);
  const t = body.temperature;
  if (t !== undefined && (typeof t !== "number" || t < 0 || t > 1)) {
    bad.push("temperature: Input should be less than or equal to 1");
  }
  const p = body.top_p;
  if (p !== undefined && (typeof p !== "number" || p < 0 || p > 1)) {
    bad.push("top_p: Input should be between 0 and 1");
  }
  if (t !== undefined && p !== undefined) {
    bad.push("`temperature` and `top_p` cannot both be specified for this model.");
  }
  if (body.top_k !== undefined && !(Number.isInteger(body.top_k) && (body.top_k as number) >= 0)) {
    bad.push("top_k: Input should be a non-negative integer");
  }
  if (body.metadata !== undefined) {
    if (!isObj(body.metadata)) bad.push("metadata: Input should be an object");
    else keysAllowed(body.metadata, ["user_id"], "metadata", bad);
  }
  if (accepts.fixedSampling) {
    if (t !== undefined && t !== 1) bad.push(`temperature: ${model} only supports 1.0`);
    if (typeof p === "number" && p < 0.99) bad.push(`top_p: ${model} requires top_p >= 0.99`);
    if (body.top_k !== undefined) bad.push(`top_k: not supported by ${model}`);
  }
  const thinking = body.thinking;
  if (thinking !== undefined) {
    if (!isObj(thinking)) bad.push("thinking: Input should be an object");
    else if (thinking.type === "enabled") {
      keysAllowed(thinking, ["type", "budget_tokens", "display"], "thinking", bad);
      if (!accepts.enabledThinking) {
        bad.push(`thinking.type.enabled: not supported for ${model}; use adaptive`);
      }
      const budget = thinking.budget_tokens;
      if (!Number.isInteger(budget) || (budget as number) < 1024) {
        bad.push("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
      } else if (!((body.max_tokens as number) > (budget as number))) {
        bad.push("`max_tokens` must be greater than `thinking.budget_tokens`");
      }
    } else if (thinking.type === "adaptive") {
      keysAllowed(thinking, ["type", "display"], "thinking", bad);
      if (!accepts.adaptiveThinking) bad.push(`thinking.type.adaptive: not supported for ${model}`);
    } else if (thinking.type !== "disabled") {
      bad.push("thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'");
    }
  }
  if (thinkingOn(body)) {
    if (t !== undefined && t !== 1) {
      bad.push("`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.");
    }
    if (typeof p === "number" && p < 0.95) {
      bad.push("`top_p` must be greater than or equal to 0.95 when thinking is enabled.");
    }
    if (body.top_k !== undefined) bad.push("`top_k` must be unset when thinking is enabled.");
    const choice = body.tool_choice;
    if (isObj(choice) && (choice.type === "any" || choice.type === "tool")) {
      bad.push("Thinking may not be enabled when tool_choice forces tool use.");
    }
  }
  const output = body.output_config;
  if (output !== undefined) {
    if (!isObj(output)) return void bad.push("output_config: Input should be an object");
    keysAllowed(output, ["effort", "format"], "output_config", bad);
    if (output.effort !== undefined) {
      if (!["low", "medium", "high", "xhigh", "max"].includes(output.effort as string)) {
        bad.push("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'");
      } else if (!accepts.effort) bad.push(`output_config.effort: not supported for ${model}`);
    }
    if (output.format !== undefined) {
      const format = output.format;
      if (!isObj(format) || format.type !== "json_schema") {
        bad.push("output_config.format.type: Input should be 'json_schema'");
      } else {
        keysAllowed(format, ["type", "schema"], "output_config.format", bad);
        if (!accepts.structuredOutputs) {
          bad.push(`output_config.format: structured outputs are not supported for ${model}`);
        }
        strictSchemaViolations(format.schema, "output_config.format.schema", bad);
      }
    }
  }
}

function thinkingOn(body: Obj): boolean {
  return isObj(body.thinking) &&
    (body.thinking.type === "enabled" || body.thinking.type === "adaptive");
}

/**
 * Checks a Messages API request; returns what is wrong with it. Thinking blocks must carry the
 * signature the fake (with `signingKey`) gave their text for the request's model.
 */
export function checkAnthropicRequest(
  headers: Headers,
  body: unknown,
  apiKey: string,
  version: string | readonly string[],
  signingKey = FAKE_SIGNING_KEY,
): string[] {
  const bad: string[] = [];
  if (headers.get("x-api-key") !== apiKey) bad.push("auth: x-api-key is wrong or missing");
  if (headers.has("authorization")) bad.push("an Authorization header was sent to Anthropic");
  const versions = typeof version === "string" ? [version] : version;
  if (!versions.includes(headers.get("anthropic-version") ?? "")) {
    bad.push(`anthropic-version: ${JSON.stringify(headers.get("anthropic-version"))}`);
  }
  if (!headers.get("content-type")?.startsWith("application/json")) {
    bad.push("content-type is not application/json");
  }
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  const betas = (headers.get("anthropic-beta") ?? "").split(",").map((b) => b.trim());
  for (const key of Object.keys(body)) {
    const beta = BETA_FIELDS[key];
    if (!TOP_LEVEL.has(key) && !(beta !== undefined && betas.includes(beta))) {
      bad.push(`${key}: Extra inputs are not permitted`);
    }
  }
  if (typeof body.model !== "string" || body.model === "") bad.push("model: Field required");
  const model = String(body.model);
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    bad.push("max_tokens: Field required (a positive integer)");
  }
  checkOptions(body, bad);
  if (body.stream !== undefined && typeof body.stream !== "boolean") bad.push("stream: boolean");
  if (body.stop_sequences !== undefined) {
    const s = body.stop_sequences;
    if (!Array.isArray(s) || s.some((x) => typeof x !== "string" || x.trim() === "")) {
      bad.push("stop_sequences: strings with non-whitespace text");
    }
  }
  let breakpoints = 0;
  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      body.system.forEach((b, i) => {
        if (!isObj(b) || b.type !== "text") return void bad.push(`system[${i}]: text blocks only`);
        checkTextBlock(b, `system[${i}]`, bad);
        breakpoints += checkCacheControl(b, `system[${i}]`, bad);
      });
    } else if (typeof body.system !== "string") bad.push("system: string or text blocks");
  }
  const accepts = modelAccepts(model);
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) bad.push("tools: must be an array");
    else {
      body.tools.forEach((tool, i) => {
        if (!isObj(tool)) return void bad.push(`tools[${i}]: not an object`);
        keysAllowed(
          tool,
          ["name", "description", "input_schema", "cache_control", "strict", ...TOOL_EXTRAS],
          `tools[${i}]`,
          bad,
        );
        breakpoints += checkCacheControl(tool, `tools[${i}]`, bad);
        if (typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
          bad.push(`tools[${i}].name: invalid`);
        } else if (toolNames.has(tool.name)) {
          bad.push(`tools: Tool names must be unique (${tool.name})`);
        } else toolNames.add(tool.name);
        if (!isObj(tool.input_schema) || tool.input_schema.type !== "object") {
          bad.push(`tools[${i}].input_schema: Input tag must be an object schema (type "object")`);
        }
        if (tool.strict !== undefined) {
          if (typeof tool.strict !== "boolean") bad.push(`tools[${i}].strict: boolean`);
          if (tool.strict === true) {
            if (!accepts.structuredOutputs) {
              bad.push(`tools[${i}].strict: structured outputs are not supported for ${model}`);
            }
            strictSchemaViolations(tool.input_schema, `tools[${i}].input_schema`, bad);
          }
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
    if (m.role === "system" && betas.includes(MID_CONVERSATION_BETA)) {
      // Between turns; the turns around it are checked as if it were not there.
      return checkSystemMessage(m, at, bad);
    }
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
      // Anthropic's own spelling of a block's place, in its thinking errors.
      const place = `messages.${i}.content.${j}`;
      if (!isObj(b)) return void bad.push(`${bat}: not an object`);
      if (b.type !== "thinking" && b.type !== "redacted_thinking") {
        breakpoints += checkCacheControl(b, bat, bad);
      }
      switch (b.type) {
        case "text":
          seenOther = true;
          return checkTextBlock(b, bat, bad);
        case "image":
          seenOther = true;
          if (m.role !== "user") bad.push(`${bat}: images only in user messages`);
          return checkImageBlock(b, bat, bad);
        case "document":
          seenOther = true;
          if (m.role !== "user") bad.push(`${bat}: documents only in user messages`);
          return checkDocumentBlock(b, bat, bad);
        case "thinking":
          keysAllowed(b, ["type", "thinking", "signature"], bat, bad);
          if (m.role !== "assistant") bad.push(`${bat}: thinking only in assistant messages`);
          if (seenOther) bad.push(`${bat}: thinking blocks must come first in the message`);
          if (typeof b.thinking !== "string") {
            bad.push(`${place}.thinking.thinking: Field required`);
          }
          if (typeof b.signature !== "string" || b.signature === "") {
            bad.push(`${place}.thinking.signature: Field required`);
          } else if (b.signature !== thinkingSignature(model, String(b.thinking), signingKey)) {
            bad.push(`${place}: Invalid \`signature\` in \`thinking\` block`);
          }
          return;
        case "redacted_thinking":
          keysAllowed(b, ["type", "data"], bat, bad);
          if (m.role !== "assistant") bad.push(`${bat}: thinking only in assistant messages`);
          if (seenOther) bad.push(`${bat}: thinking blocks must come first in the message`);
          if (typeof b.data !== "string" || !isRedactedThinkingData(model, b.data, signingKey)) {
            bad.push(`${place}: Invalid \`data\` in \`redacted_thinking\` block`);
          }
          return;
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
          if (b.is_error !== undefined && typeof b.is_error !== "boolean") {
            bad.push(`${bat}.is_error: boolean`);
          }
          if (b.content !== undefined && typeof b.content !== "string") {
            if (!Array.isArray(b.content)) bad.push(`${bat}.content: string or blocks`);
            else {
              b.content.forEach((c, k) => {
                const cat = `${bat}.content[${k}]`;
                if (isObj(c) && c.type === "text") checkTextBlock(c, cat, bad);
                else if (isObj(c) && c.type === "image") checkImageBlock(c, cat, bad);
                else if (isObj(c) && c.type === "document") checkDocumentBlock(c, cat, bad);
                else bad.push(`${cat}: text, image or document blocks only`);
              });
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
  if (breakpoints > 4) {
    bad.push(`A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`);
  }
  const last = previous as Obj | null;
  if (last?.role === "assistant" && toolUseIds(last).size > 0) {
    bad.push("the last assistant message has tool_use blocks without results");
  }
  if (thinkingOn(body)) {
    checkToolLoopThinking((body.messages as Obj[]).filter((m) => m.role !== "system"), bad);
  }
  return bad;
}

/** A `role: "system"` message (the mid-conversation beta): text blocks (or a string), tool
 * additions and removals, `clear_at`, a per-message `output_config`. */
function checkSystemMessage(m: Obj, at: string, bad: string[]): void {
  keysAllowed(m, ["role", "content", "clear_at", "output_config"], at, bad);
  if (m.clear_at !== undefined && m.clear_at !== null) {
    if (m.clear_at !== "next_user_message" && m.clear_at !== "never") {
      bad.push(`${at}.clear_at: Input should be 'next_user_message' or 'never'`);
    }
  }
  if (typeof m.content === "string") {
    if (m.content.trim() === "") bad.push(`${at}: text content must be non-empty`);
    return;
  }
  if (m.content === undefined) {
    if (!isObj(m.output_config)) bad.push(`${at}: content or output_config is required`);
    return;
  }
  if (!Array.isArray(m.content)) return void bad.push(`${at}.content: string or blocks`);
  m.content.forEach((b, j) => {
    const bat = `${at}.content[${j}]`;
    if (isObj(b) && b.type === "text") checkTextBlock(b, bat, bad);
    else if (!isObj(b) || (b.type !== "tool_addition" && b.type !== "tool_removal")) {
      bad.push(`${bat}.type: text, tool_addition or tool_removal`);
    }
  });
}

/** With thinking on, mid tool loop, the final assistant turn must start with thinking. */
function checkToolLoopThinking(messages: Obj[], bad: string[]): void {
  const n = messages.length;
  const [calls, results] = [messages[n - 2], messages[n - 1]];
  if (calls?.role !== "assistant" || results?.role !== "user") return;
  if (!Array.isArray(results.content) || !Array.isArray(calls.content)) return;
  if (!results.content.some((b) => isObj(b) && b.type === "tool_result")) return;
  const first = (calls.content[0] as Obj | undefined)?.type;
  if (first === "thinking" || first === "redacted_thinking") return;
  bad.push(
    `messages.${
      n - 2
    }.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  );
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

function resultText(content: unknown): string {
  if (content === undefined) return "";
  return blocksOf(content).filter((c) => c.type === "text").map((c) => c.text as string).join("");
}

/** The provider-neutral conversation of a (valid) Messages request. Thinking blocks are not
 * part of it: Anthropic strips earlier turns' thinking from the context. */
function anthropicConversation(body: Obj): Conversation {
  const system = body.system === undefined
    ? []
    : typeof body.system === "string"
    ? [body.system]
    : (body.system as Obj[]).map((b) => b.text as string);
  const messages = body.messages as Obj[];
  // Mid-conversation system messages (the beta) instruct like `system`.
  for (const m of messages.filter((m) => m.role === "system")) {
    for (const b of m.content === undefined ? [] : blocksOf(m.content)) {
      if (b.type === "text") system.push(b.text as string);
    }
  }
  const turns = messages.filter((m) => m.role !== "system").map((m): Turn => {
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
        turn.images.push(
          src.type === "url" ? { mediaType: "url", bytes: 0 } : {
            mediaType: src.media_type as string,
            bytes: decodeBase64(src.data as string)!.length,
          },
        );
      } else if (b.type === "tool_use") {
        turn.toolCalls.push({
          id: b.id as string,
          name: b.name as string,
          arguments: b.input as Record<string, unknown>,
        });
      } else if (b.type === "tool_result") {
        turn.toolResults.push({ id: b.tool_use_id as string, text: resultText(b.content) });
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

/** What one answer does besides the script's reply (see {@link FakeAnthropic.turns}). */
export interface AnthropicTurn {
  /** End the answer this way: `refusal` (the text cut to its first half, no tool calls, with
   * `stop_details`), `pause_turn` (no tool calls), or a full context window. */
  stopReason?: "refusal" | "pause_turn" | "model_context_window_exceeded";
  /** The refusal's `stop_details.category` (default `"cyber"`). */
  refusalCategory?: string | null;
  /** The thinking text, when thinking is on (default: "Thinking about: <last user text>", or
   * the tool results after a tool call). */
  thinking?: string;
  /** Answer with a `redacted_thinking` block instead of a `thinking` one (as the user text
   * holding {@link REDACTED_THINKING_TRIGGER} does). */
  redacted?: boolean;
}

/** The fake's reply to one request, before rendering. */
interface Reply {
  g: Generation;
  /** The thinking block first in the answer, if thinking is on. */
  thinking: Obj | null;
  thinkingTokens: number;
  stopReason: string;
  stopDetails: Obj | null;
  cache: { read: number; written: number; ttl: "5m" | "1h" };
  /** The answer's text, when structured outputs made it JSON. */
  json: string | null;
}

function stopReasonOf(g: Generation): string {
  return {
    stop: "end_turn",
    stop_sequence: "stop_sequence",
    length: "max_tokens",
    tool_calls: "tool_use",
  }[g.finish];
}

function usageOf(r: Reply, input: number, output: number): Obj {
  const usage: Obj = {
    input_tokens: input,
    cache_creation_input_tokens: r.cache.written,
    cache_read_input_tokens: r.cache.read,
    cache_creation: {
      ephemeral_5m_input_tokens: r.cache.ttl === "5m" ? r.cache.written : 0,
      ephemeral_1h_input_tokens: r.cache.ttl === "1h" ? r.cache.written : 0,
    },
    output_tokens: output,
    service_tier: "standard",
  };
  if (r.thinking !== null) usage.output_tokens_details = { thinking_tokens: r.thinkingTokens };
  return usage;
}

function inputTokens(r: Reply): number {
  return r.g.promptTokens - r.cache.read - r.cache.written;
}

function outputTokens(r: Reply): number {
  return r.g.completionTokens + r.thinkingTokens;
}

/** The answer's text: the JSON of structured outputs, or the generated pieces. */
function textPieces(r: Reply): string[] {
  return r.json === null ? r.g.pieces : fragments(r.json, 8);
}

/** Renders a reply as a non-streamed Messages API response. */
function anthropicMessage(id: string, model: string, r: Reply): Obj {
  const content: Obj[] = [];
  if (r.thinking !== null) content.push(r.thinking);
  const text = textPieces(r).join("");
  if (text !== "") content.push({ type: "text", text });
  for (const c of r.g.toolCalls) {
    content.push({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) });
  }
  const message: Obj = {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: r.stopReason,
    stop_sequence: r.g.stopSequence,
    usage: usageOf(r, inputTokens(r), outputTokens(r)),
  };
  if (r.stopDetails !== null) message.stop_details = r.stopDetails;
  return message;
}

function event(data: Obj): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Renders a reply as the Messages API's SSE event sequence. */
function anthropicStreamEvents(id: string, model: string, r: Reply): string[] {
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
      usage: usageOf(r, inputTokens(r), 1),
    },
  })];
  let index = 0;
  let pinged = false;
  const ping = () => {
    if (!pinged) events.push(`event: ping\ndata: {"type": "ping"}\n\n`);
    pinged = true;
  };
  const delta = (d: Obj) => events.push(event({ type: "content_block_delta", index, delta: d }));
  const block = (start: Obj, fill: () => void) => {
    events.push(event({ type: "content_block_start", index, content_block: start }));
    ping();
    fill();
    events.push(event({ type: "content_block_stop", index }));
    index++;
  };
  const thinking = r.thinking;
  if (thinking?.type === "thinking") {
    block({ type: "thinking", thinking: "", signature: "" }, () => {
      for (const piece of tokenize(thinking.thinking as string)) {
        delta({ type: "thinking_delta", thinking: piece });
      }
      delta({ type: "signature_delta", signature: thinking.signature });
    });
  } else if (thinking !== null) block(thinking, () => {});
  const pieces = textPieces(r);
  if (pieces.length > 0) {
    block({ type: "text", text: "" }, () => {
      for (const text of pieces) delta({ type: "text_delta", text });
    });
  }
  for (const call of r.g.toolCalls) {
    block({ type: "tool_use", id: call.id, name: call.name, input: {} }, () => {
      for (const partial_json of ["", ...fragments(call.arguments, 5)]) {
        delta({ type: "input_json_delta", partial_json });
      }
    });
  }
  const stop: Obj = { stop_reason: r.stopReason, stop_sequence: r.g.stopSequence };
  if (r.stopDetails !== null) stop.stop_details = r.stopDetails;
  const usage = usageOf(r, inputTokens(r), outputTokens(r));
  events.push(event({
    type: "message_delta",
    delta: stop,
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    },
  }));
  events.push(event({ type: "message_stop" }));
  return events;
}

/**
 * Checks a `count_tokens` request: a Messages request without `max_tokens` and `stream`
 * (Anthropic rejects both there), the rest as {@link checkAnthropicRequest} checks it.
 */
export function checkCountTokensRequest(
  headers: Headers,
  body: unknown,
  apiKey: string,
  version: string | readonly string[],
  signingKey = FAKE_SIGNING_KEY,
): string[] {
  if (!isObj(body)) return checkAnthropicRequest(headers, body, apiKey, version, signingKey);
  const bad = ["max_tokens", "stream"].filter((key) => key in body).map((key) =>
    `${key}: Extra inputs are not permitted`
  );
  const asMessage = { ...body, max_tokens: 1_000_000 };
  return [...bad, ...checkAnthropicRequest(headers, asMessage, apiKey, version, signingKey)];
}

/** Options of {@link startFakeAnthropic}. */
export interface FakeAnthropicOptions extends FakeOptions {
  /** The `anthropic-version` it requires (default: any of {@link ANTHROPIC_VERSIONS}). */
  version?: string;
  /** Models it knows; others get a 404 `not_found_error`. Default: any. */
  models?: string[];
  /** The key of its thinking signatures (see fake_anthropic_signature.ts). */
  signingKey?: string;
  /** Prefixes shorter than this many tokens are not cached (default 0: any). */
  cacheMinTokens?: number;
  /** How it answers count_tokens at first (see {@link FakeAnthropic.countTokens}). */
  countTokens?: CountTokensEndpoint;
}

/**
 * How a fake answers `POST /v1/messages/count_tokens`: with its count (`"count"`, Anthropic's
 * answer), or as an Anthropic-compatible server without the endpoint does: 404 (no such path)
 * or 405 (a path of other methods), in FastAPI's bytes (vLLM, and most Python servers):
 * `{"detail":"Not Found"}`, `{"detail":"Method Not Allowed"}`.
 */
export type CountTokensEndpoint = "count" | 404 | 405;

/** FastAPI's error details, by status. */
const FASTAPI_DETAIL = { 404: "Not Found", 405: "Method Not Allowed" } as const;

/** A running fake Anthropic upstream. */
export interface FakeAnthropic extends FakeUpstream {
  /** What the next answers do besides the script's reply, in order (like `faults`); answers
   * beyond them are plain. */
  turns: AnthropicTurn[];
  /** The key its thinking signatures are made with. */
  readonly signingKey: string;
  /** How it answers count_tokens from now on (default `"count"`). */
  countTokens: CountTokensEndpoint;
}

/** The thinking text of an answer: the turn's, or one about the last user turn. */
function thinkingText(c: Conversation, turn: AnthropicTurn): string {
  if (turn.thinking !== undefined) return turn.thinking;
  const last = c.turns.at(-1);
  if (last?.toolResults.length) {
    return `The tools answered: ${last.toolResults.map((r) => r.text).join("; ")}.`;
  }
  return `Thinking about: ${last?.texts.join(" ") ?? ""}`;
}

/**
 * Starts a fake Anthropic upstream on a free port; its `url` is a base_url. With thinking on
 * (`enabled` or `adaptive`) each answer starts with a thinking block (at most `budget_tokens`
 * words) signed for the request's model; structured outputs (`output_config.format`) answer
 * with JSON sampled from the schema; `cache_control` breakpoints are remembered and reported
 * in the usage as Anthropic does.
 */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeAnthropic {
  let calls = 0;
  let messages = 0;
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const version = options.version ?? ANTHROPIC_VERSIONS;
  const signingKey = options.signingKey ?? FAKE_SIGNING_KEY;
  const cache = new FakePromptCache(options.cacheMinTokens);
  const reply = (body: Obj, script: Script): Reply => {
    const turn = fake.turns.shift() ?? {};
    const model = body.model as string;
    const conversation = anthropicConversation(body);
    let g = generate(
      conversation,
      script(conversation),
      () => `toolu_fake${String(++calls).padStart(16, "0")}`,
    );
    let thinking: Obj | null = null;
    let thinkingTokens = 0;
    if (thinkingOn(body)) {
      const budget = (body.thinking as Obj).budget_tokens as number | undefined;
      const pieces = tokenize(thinkingText(conversation, turn)).slice(0, budget);
      const text = pieces.join("");
      thinkingTokens = pieces.length;
      const lastText = conversation.turns.at(-1)?.texts.join(" ") ?? "";
      thinking = turn.redacted || lastText.includes(REDACTED_THINKING_TRIGGER)
        ? { type: "redacted_thinking", data: redactedThinkingData(model, text, signingKey) }
        : {
          type: "thinking",
          thinking: text,
          signature: thinkingSignature(model, text, signingKey),
        };
    }
    let stopReason = stopReasonOf(g);
    let stopDetails: Obj | null = null;
    if (turn.stopReason !== undefined) {
      stopReason = turn.stopReason;
      const keep = turn.stopReason === "refusal" ? Math.ceil(g.pieces.length / 2) : g.pieces.length;
      g = { ...g, pieces: g.pieces.slice(0, keep), toolCalls: [], stopSequence: null };
      g.completionTokens = g.pieces.length;
      if (turn.stopReason === "refusal") {
        stopDetails = {
          type: "refusal",
          category: turn.refusalCategory === undefined ? "cyber" : turn.refusalCategory,
          explanation: "The request was declined by the fake's safety filter.",
        };
      }
    }
    let json: string | null = null;
    const format = (body.output_config as Obj | undefined)?.format as Obj | undefined;
    if (format !== undefined && g.toolCalls.length === 0 && turn.stopReason === undefined) {
      const sampler = new SchemaSampler(conversation.turns.at(-1)?.texts.join(" ") ?? "");
      json = JSON.stringify(
        sampler.sampleValue(format.schema as Obj, "output_config.format.schema"),
      );
      g = { ...g, completionTokens: Math.ceil(json.length / 4) };
    }
    const used = cache.use(body, (prefix) => promptTokens(anthropicConversation(prefix)));
    return { g, thinking, thinkingTokens, stopReason, stopDetails, cache: used, json };
  };
  const style: FakeStyle = {
    path: "/v1/messages",
    check: (headers, body) => checkAnthropicRequest(headers, body, apiKey, version, signingKey),
    answer(body, script: Script) {
      const model = body.model as string;
      if (options.models && !options.models.includes(model)) {
        return {
          kind: "json",
          status: 404,
          body: style.errorBody(404, "not_found_error", `model: ${model}`),
        };
      }
      const r = reply(body, script);
      const id = `msg_fake${++messages}`;
      if (body.stream !== true) {
        return { kind: "json", status: 200, body: anthropicMessage(id, model, r) };
      }
      return { kind: "stream", events: anthropicStreamEvents(id, model, r) };
    },
    routes: {
      "/v1/models": anthropicListRoute(
        apiKey,
        typeof version === "string" ? [version] : version,
        () => fake,
      ),
      "/v1/messages/count_tokens": {
        // Checked in every mode: what the gateway sends is right whatever the server does.
        check: (headers, body) =>
          checkCountTokensRequest(headers, body, apiKey, version, signingKey),
        answer: (body) =>
          fake.countTokens === "count"
            ? {
              kind: "json",
              status: 200,
              body: { input_tokens: promptTokens(anthropicConversation(body)) },
            }
            : {
              kind: "json",
              status: fake.countTokens,
              body: { detail: FASTAPI_DETAIL[fake.countTokens] },
            },
      },
    },
    errorBody: (_status, type, message) => ({
      type: "error",
      error: { type, message },
      request_id: "req_fake0001",
    }),
    streamError: (type, message) =>
      `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`,
  };
  const fake = Object.assign(new FakeUpstream(style, { ...options, apiKey }), {
    turns: [] as AnthropicTurn[],
    signingKey,
    countTokens: options.countTokens ?? "count",
  });
  fake.listing = structuredClone([...ANTHROPIC_LISTING]);
  return fake;
}

/** A script like the default one whose tool calls carry arguments sampled from the tool's
 * schema (numbers where numbers are asked for…), as a forced or strict call would. */
export function withSampledArguments(script: Script = defaultScript): Script {
  return (c) => {
    const reply = script(c);
    const text = c.turns.at(-1)?.texts.join(" ") ?? "";
    return {
      ...reply,
      toolCalls: reply.toolCalls.map((call) => {
        const tool = c.tools.find((t) => t.name === call.name);
        if (tool === undefined) return call;
        const sampled = new SchemaSampler(text).sampleArguments(tool.parameters, "input_schema");
        return { name: call.name, arguments: sampled };
      }),
    };
  };
}
