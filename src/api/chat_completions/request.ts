/**
 * `POST /v1/chat/completions` bodies (spec §2.3, §2.4, §4.2) into canonical requests: every
 * field is checked, every failure is a 400 `invalid_request_error` with a string code and the
 * `param` it names (`messages[2].content[0].image_url.url`). Fields the canonical model does
 * not carry (OpenAI's `logprobs`, `service_tier`, `prediction`, `store`…) pass unchanged in
 * `extras`, for back ends of the same protocol.
 */
import type { CanonicalRequest, Options } from "../../canonical/conversation.ts";
import { DEFAULT_IMAGE_CAPS } from "../../config.ts";
import type { ImageCaps } from "../../http/image_data_url.ts";
import { quote } from "../../quote.ts";
import { invalidValue, requiredString } from "../../routes/params.ts";
import {
  absent,
  invalidType,
  isObject,
  kindOf,
  type Obj,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
} from "./checks.ts";
import { decodeImages, type PendingImages } from "./images.ts";
import { parseMessages } from "./messages.ts";
import { parseReasoning } from "./reasoning.ts";
import { parseResponseFormat } from "./response_format.ts";
import { parseToolChoice, parseTools } from "./tools.ts";

/** `max_tokens` when neither the caller nor the model's `default_max_tokens` gives one
 * (spec §4.2). */
export const DEFAULT_MAX_TOKENS = 256;
/** OpenAI's limit on stop sequences. */
const MAX_STOP_SEQUENCES = 4;
/** OpenAI's limits on `metadata`: pairs, key and value characters. */
const METADATA_LIMITS = { pairs: 16, key: 64, value: 512 };

/** The body fields this front door reads; every other one goes to `extras` as sent. */
const MODELLED = new Set([
  "model",
  "messages",
  "temperature",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "stop",
  "tools",
  "tool_choice",
  "n",
  "top_p",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "user",
  "metadata",
  "parallel_tool_calls",
  "response_format",
  "reasoning_effort",
  "reasoning",
]);

/** Checks a parsed JSON body (its images within `caps`) and returns the canonical request. Its
 * `maxTokens` is the caller's, or {@link DEFAULT_MAX_TOKENS} (the route applies the model's
 * default when the caller gave none). */
export function parseChatRequest(
  body: Obj,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): CanonicalRequest {
  // The same wording as every other endpoint's `model`.
  const model = requiredString(body, "model");
  if (model === "") throw invalidValue("`model` must be a non-empty string.", "model");
  const pending: PendingImages = { fields: [], parts: [] };
  const messages = parseMessages(body.messages, pending);
  decodeImages(pending, caps);

  const temperature = optionalNumber(body, "temperature", 0, 2);
  const maxTokens = parseMaxTokens(body);
  const stream = optionalBoolean(body, "stream") ?? false;
  const tools = parseTools(body.tools);
  const includeUsage = parseStreamOptions(body.stream_options, stream);
  const options: Options = {
    maxTokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    maxTokensGiven: maxTokens !== null,
    stop: parseStop(body.stop),
    output: { type: "text" },
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools),
  };
  if (temperature !== null) options.temperature = temperature;
  const topP = optionalNumber(body, "top_p", 0, 1);
  if (topP !== null) options.topP = topP;
  const presence = optionalNumber(body, "presence_penalty", -2, 2);
  if (presence !== null) options.presencePenalty = presence;
  const frequency = optionalNumber(body, "frequency_penalty", -2, 2);
  if (frequency !== null) options.frequencyPenalty = frequency;
  const seed = optionalInteger(body, "seed", Number.MIN_SAFE_INTEGER);
  if (seed !== null) options.seed = seed;
  const parallel = optionalBoolean(body, "parallel_tool_calls");
  if (parallel !== null) options.parallelToolCalls = parallel;
  const user = optionalString(body, "user");
  if (user !== null) options.user = user;
  if (!absent(body.metadata)) options.metadata = parseMetadata(body.metadata);
  if (!absent(body.logit_bias)) checkLogitBias(body.logit_bias);
  options.output = parseResponseFormat(body.response_format);
  const reasoning = parseReasoning(body);
  if (reasoning) options.reasoning = reasoning;
  const n = body.n;
  if (!absent(n) && n !== 1) {
    throw invalidValue(
      `Only one choice per request is supported: \`n\` must be 1, not ${quote(n)}.`,
      "n",
    );
  }
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!MODELLED.has(key)) fields[key] = body[key];
  return {
    model,
    messages,
    options,
    stream,
    includeUsage,
    extras: { protocol: "openai_chat", fields },
  };
}

function parseMaxTokens(body: Obj): number | null {
  const a = optionalInteger(body, "max_tokens", 1);
  const b = optionalInteger(body, "max_completion_tokens", 1);
  if (a !== null && b !== null && a !== b) {
    throw invalidValue(
      `\`max_tokens\` (${a}) and \`max_completion_tokens\` (${b}) disagree; send one of them.`,
      "max_completion_tokens",
    );
  }
  return a ?? b;
}

function parseStreamOptions(value: unknown, stream: boolean): boolean {
  if (absent(value)) return false;
  if (!isObject(value)) {
    throw invalidType(
      `\`stream_options\` must be an object, not ${kindOf(value)}.`,
      "stream_options",
    );
  }
  if (!stream) {
    throw invalidValue(
      "`stream_options` is only allowed when `stream` is true.",
      "stream_options",
    );
  }
  return optionalBoolean(value, "include_usage", "stream_options.include_usage") ?? false;
}

function parseStop(value: unknown): string[] {
  if (absent(value)) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list)) {
    throw invalidType(
      `\`stop\` must be a string or an array of up to ${MAX_STOP_SEQUENCES} strings, not ${
        kindOf(value)
      }.`,
      "stop",
    );
  }
  if (list.length > MAX_STOP_SEQUENCES) {
    throw invalidValue(
      `\`stop\` may hold at most ${MAX_STOP_SEQUENCES} sequences, not ${list.length}.`,
      "stop",
    );
  }
  return list.map((s, i) => {
    const param = typeof value === "string" ? "stop" : `stop[${i}]`;
    if (typeof s !== "string") {
      throw invalidType(`\`${param}\` must be a string, not ${kindOf(s)}.`, param);
    }
    if (s === "") throw invalidValue(`\`${param}\` must not be an empty string.`, param);
    return s;
  });
}

/** `metadata`: at most 16 string pairs, keys up to 64 characters, values up to 512 (OpenAI's
 * limits). */
function parseMetadata(value: unknown): Record<string, string> {
  if (!isObject(value)) {
    throw invalidType(
      `\`metadata\` must be an object of string keys and values, not ${kindOf(value)}.`,
      "metadata",
    );
  }
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.pairs) {
    throw invalidValue(
      `\`metadata\` may hold at most ${METADATA_LIMITS.pairs} pairs, not ${entries.length}.`,
      "metadata",
    );
  }
  const metadata: Record<string, string> = {};
  for (const [key, v] of entries) {
    const param = `metadata.${key}`;
    if (key.length > METADATA_LIMITS.key) {
      throw invalidValue(
        `\`metadata\` keys may have at most ${METADATA_LIMITS.key} characters: ${quote(key)}.`,
        param,
      );
    }
    if (typeof v !== "string") {
      throw invalidType(`\`${param}\` must be a string, not ${kindOf(v)}.`, param);
    }
    if (v.length > METADATA_LIMITS.value) {
      throw invalidValue(
        `\`${param}\` may have at most ${METADATA_LIMITS.value} characters, not ${v.length}.`,
        param,
      );
    }
    metadata[key] = v;
  }
  return metadata;
}

/** `logit_bias` (passed on in `extras`): token ids mapped to numbers from -100 to 100. */
function checkLogitBias(value: unknown): void {
  if (!isObject(value)) {
    throw invalidType(
      `\`logit_bias\` must be an object mapping token ids to numbers, not ${kindOf(value)}.`,
      "logit_bias",
    );
  }
  for (const [token, bias] of Object.entries(value)) {
    const param = `logit_bias.${token}`;
    if (!/^\d+$/.test(token)) {
      throw invalidValue(`\`logit_bias\` keys must be token ids, not ${quote(token)}.`, param);
    }
    if (typeof bias !== "number" || !(bias >= -100 && bias <= 100)) {
      const message = `\`${param}\` must be a number from -100 to 100.`;
      throw typeof bias === "number" ? invalidValue(message, param) : invalidType(message, param);
    }
  }
}
