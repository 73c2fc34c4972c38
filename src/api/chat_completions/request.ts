/**
 * `POST /v1/chat/completions` bodies (spec §2.3, §2.4, §4.2) into canonical requests: every
 * field is checked by the validation readers, so every failure is the one 400 of
 * `validation/` with a string code and the `param` it names
 * (`messages[2].content[0].image_url.url`). Fields the canonical model does not carry
 * (OpenAI's `logprobs`, `service_tier`, `prediction`, `store`...) pass unchanged in `extras`,
 * for back ends of the same protocol.
 */
import {
  type CanonicalRequest,
  defaultOptions,
  type Options,
} from "../../canonical/conversation.ts";
import { DEFAULT_IMAGE_CAPS } from "../../config/limits.ts";
import type { ImageCaps } from "../../http/image_data_url.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { type Fields, OPTIONAL, type Reader, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";
import { decodeImages, type PendingImages } from "../shared/images.ts";
import { parseMessages } from "./messages.ts";
import { parseReasoning } from "./reasoning.ts";
import { parseResponseFormat } from "./response_format.ts";
import { parseToolChoice } from "../shared/tool_choice.ts";
import { NAMED_CHOICE, parseTools } from "./tools.ts";

/** The rules of the optional fields (built once: this parse is on every request's path). */
const RULES = {
  model: { nonEmpty: true },
  temperature: { optional: true, min: 0, max: 2 },
  topP: { optional: true, min: 0, max: 1 },
  penalty: { optional: true, min: -2, max: 2 },
  tokens: { optional: true, min: 1 },
  /** OpenAI's limit on stop sequences. */
  stop: { maxItems: 4, expected: "a string or an array of strings" },
  stopSequence: { nonEmpty: true },
  /** OpenAI's limit on a `metadata` value. */
  metadataValue: { maxLength: 512 },
  bias: { min: -100, max: 100 },
} as const;
/** OpenAI's limits on `metadata`: pairs and key characters. */
const METADATA_LIMITS = { pairs: 16, key: 64 };
const VERBOSITIES = ["low", "medium", "high"] as const;

/** Checks a parsed JSON body (its images within `caps`) and returns the canonical request. Its
 * `maxTokens` is the caller's, or {@link DEFAULT_MAX_TOKENS} (the route applies the model's
 * default when the caller gave none). */
export function parseChatRequest(
  body: Record<string, unknown>,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): CanonicalRequest {
  const f = readRequest(body);
  const model = f.string("model", RULES.model);
  const pending: PendingImages = { fields: [], parts: [] };
  const messages = parseMessages(f, pending);
  decodeImages(pending, caps);
  const sent: Sent = {};
  const options = parseOptions(f, sent);
  const stream = sent.stream ?? false;
  const includeUsage = streamUsage(sent.streamOptions, stream);
  // Every field not read so far goes to the back end as sent; `logit_bias` too, checked here.
  const extras = f.extras();
  const bias = f.object("logit_bias", OPTIONAL);
  if (bias !== undefined) checkLogitBias(bias);
  return {
    model,
    messages,
    options,
    stream,
    includeUsage,
    extras: { protocol: "openai_chat", fields: extras },
  };
}

/** What the optional fields sent ask for beyond the options. */
interface Sent {
  stream?: boolean | undefined;
  streamOptions?: Fields | undefined;
  maxTokens?: number | undefined;
  maxCompletionTokens?: number | undefined;
  toolChoice?: Reader | undefined;
  reasoning?: boolean;
}

/**
 * The options of a body (sampling, tools, output format, reasoning, the caller's tags); `sent`
 * gets what needs other fields. Only the keys sent are read (a body sends a few of the ~20
 * known), each by its entry in {@link OPTION_READERS}: this took the parse from ~590 to
 * ~440 ns (bench/chat_request_bench.ts).
 */
function parseOptions(f: Fields, sent: Sent): Options {
  const options = defaultOptions();
  for (const key of f.keys) OPTION_READERS.get(key)?.(f, options, sent);
  const { maxTokens, maxCompletionTokens } = sent;
  if (
    maxTokens !== undefined && maxCompletionTokens !== undefined &&
    maxTokens !== maxCompletionTokens
  ) {
    throw invalidValue(
      "max_completion_tokens",
      `expected the same as 'max_tokens' (${maxTokens}), but got ${maxCompletionTokens}; send one of them`,
    );
  }
  const tokens = maxTokens ?? maxCompletionTokens;
  if (tokens !== undefined) {
    options.maxTokens = tokens;
    options.maxTokensGiven = true;
  }
  options.toolChoice = parseToolChoice(sent.toolChoice, options.tools, NAMED_CHOICE);
  if (sent.reasoning) {
    const reasoning = parseReasoning(f);
    if (reasoning) options.reasoning = reasoning;
  }
  return options;
}

/** Reads one optional field of a body into the options, or into `sent`. */
type OptionReader = (f: Fields, options: Options, sent: Sent) => void;

/** The optional fields of a body the front door models, and how each is read. */
const OPTION_READERS: ReadonlyMap<string, OptionReader> = new Map<string, OptionReader>([
  ["stream", (f, _, sent) => sent.stream = f.boolean("stream", OPTIONAL)],
  ["stream_options", (f, _, sent) => sent.streamOptions = f.object("stream_options", OPTIONAL)],
  ["max_tokens", (f, _, sent) => sent.maxTokens = f.integer("max_tokens", RULES.tokens)],
  [
    "max_completion_tokens",
    (f, _, sent) => sent.maxCompletionTokens = f.integer("max_completion_tokens", RULES.tokens),
  ],
  ["temperature", (f, o) => setIf(o, "temperature", f.number("temperature", RULES.temperature))],
  ["top_p", (f, o) => setIf(o, "topP", f.number("top_p", RULES.topP))],
  [
    "presence_penalty",
    (f, o) => setIf(o, "presencePenalty", f.number("presence_penalty", RULES.penalty)),
  ],
  [
    "frequency_penalty",
    (f, o) => setIf(o, "frequencyPenalty", f.number("frequency_penalty", RULES.penalty)),
  ],
  ["seed", (f, o) => setIf(o, "seed", f.integer("seed", OPTIONAL))],
  ["n", (f) => checkN(f.integer("n", OPTIONAL))],
  ["stop", (f, o) => o.stop = parseStop(f.optional("stop"))],
  ["tools", (f, o) => o.tools = parseTools(f)],
  ["tool_choice", (f, _, sent) => sent.toolChoice = f.optional("tool_choice")],
  [
    "response_format",
    (f, o) => o.output = parseResponseFormat(f.object("response_format", OPTIONAL)),
  ],
  [
    "parallel_tool_calls",
    (f, o) => setIf(o, "parallelToolCalls", f.boolean("parallel_tool_calls", OPTIONAL)),
  ],
  ["user", (f, o) => setIf(o, "user", f.string("user", OPTIONAL))],
  ["verbosity", (f, o) => setIf(o, "verbosity", f.oneOf("verbosity", VERBOSITIES, OPTIONAL))],
  ["metadata", (f, o) => setIf(o, "metadata", parseMetadata(f.object("metadata", OPTIONAL)))],
  ["reasoning", (_f, _o, sent) => sent.reasoning = true],
  ["reasoning_effort", (_f, _o, sent) => sent.reasoning = true],
]);

/** `stream_options.include_usage`; the options only go with `stream: true`. */
function streamUsage(options: Fields | undefined, stream: boolean): boolean {
  if (options === undefined) return false;
  if (!stream) throw options.reader.invalid("only allowed when 'stream' is true");
  return options.boolean("include_usage", OPTIONAL) ?? false;
}

/** `n`: one choice per request. */
function checkN(n: number | undefined): void {
  if (n !== undefined && n !== 1) {
    throw invalidValue("n", `expected 1 (one choice per request is supported), but got ${n}`);
  }
}

/** Sets `options[key]` when the caller sent a value. */
function setIf<K extends keyof Options>(options: Options, key: K, value: Options[K] | undefined) {
  if (value !== undefined) options[key] = value;
}

function parseStop(r: Reader | undefined): string[] {
  if (r === undefined) return [];
  const list = typeof r.value === "string" ? [r] : r.array(RULES.stop);
  return list.map((s) => s.string(RULES.stopSequence));
}

/** `metadata`: at most 16 string pairs, keys up to 64 characters, values up to 512 (OpenAI's
 * limits). */
function parseMetadata(f: Fields | undefined): Record<string, string> | undefined {
  if (f === undefined) return undefined;
  const entries = f.entries();
  if (entries.length > METADATA_LIMITS.pairs) {
    throw f.reader.invalid(
      `expected at most ${count(METADATA_LIMITS.pairs, "pair")}, but got ${entries.length}`,
    );
  }
  const metadata: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (key.length > METADATA_LIMITS.key) {
      throw value.invalid(
        `expected a key of at most ${
          count(METADATA_LIMITS.key, "character")
        }, but got one of ${key.length}`,
      );
    }
    metadata[key] = value.string(RULES.metadataValue);
  }
  return metadata;
}

/** `logit_bias` (passed on in `extras`): token ids mapped to numbers from -100 to 100. */
function checkLogitBias(map: Fields): void {
  for (const [token, bias] of map.entries()) {
    if (!/^\d+$/.test(token)) {
      throw bias.invalid(`expected a token id as the key, but got ${quote(token)}`);
    }
    bias.number(RULES.bias);
  }
}
