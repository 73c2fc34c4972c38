import type { EmbeddingsConfig } from "../../config/types.ts";
import type { EmbeddingRequest } from "../../types/openai.ts";
import { unsupportedParameter } from "../../validation/error.ts";
import { type Reader, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";

/** Characters a token of text counts as, for `max_input_tokens` (the gateway cannot know every
 * model's tokenizer; the upstream stays the judge of its exact count). */
const CHARS_PER_TOKEN = 4;

const MODEL = { nonEmpty: true } as const;
const ENCODINGS = ["float", "base64"] as const;
/** Gemini's task types (`task_type`, an extension field: back ends without it drop it). */
const TASK_TYPES = [
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
] as const;
const INPUT = {
  minItems: 1,
  expected: "a string, an array of strings, an array of token ids or an array of such arrays",
} as const;
const TEXT = { nonEmpty: true, expected: "a string like the other items" } as const;
const TOKEN_ID = { min: 0, expected: "a token id (an integer) like the other items" } as const;
const TOKENS = { minItems: 1, expected: "an array of token ids like the other items" } as const;

/** The requested model id (required, as OpenAI requires it). */
export function embeddingModelId(body: Record<string, unknown>): string {
  return readRequest(body).string("model", MODEL);
}

/** Checks one text against the model's input size. */
function text(item: Reader, settings: EmbeddingsConfig): string {
  const value = item.string(TEXT);
  if (Math.ceil(value.length / CHARS_PER_TOKEN) > settings.max_input_tokens) {
    throw item.invalid(tooLong(settings, `${value.length} characters`));
  }
  return value;
}

/** Checks one array of token ids against the model's input size. */
function tokens(input: Reader, settings: EmbeddingsConfig): number[] {
  const ids = input.array(TOKENS).map((id) => id.integer(TOKEN_ID));
  if (ids.length > settings.max_input_tokens) {
    throw input.invalid(tooLong(settings, `${ids.length} tokens`));
  }
  return ids;
}

function tooLong(settings: EmbeddingsConfig, got: string): string {
  return `expected an input of at most ${
    count(settings.max_input_tokens, "token")
  } (text counts four characters a token), but got ${got}`;
}

/**
 * Validates an embeddings request for a model with `settings`: `input` (a string, strings,
 * token ids, or arrays of token ids; none empty, at most `max_inputs` of them, each within
 * `max_input_tokens`), `encoding_format`, `dimensions` (up to the model's vector length, and
 * only where the model takes it), `user` and `task_type` (Gemini's). Throws a 400 naming the parameter. Unknown
 * fields are ignored, as on the other OpenAI endpoints.
 */
export function readEmbeddingRequest(
  body: Record<string, unknown>,
  model: string,
  settings: EmbeddingsConfig,
): EmbeddingRequest {
  const f = readRequest(body);
  const field = f.get("input");
  let input: string[] | number[][];
  if (typeof field.value === "string") {
    input = [text(field, settings)];
  } else {
    const items = field.array(INPUT);
    const first = items[0]!.value;
    if (typeof first === "number") input = [tokens(field, settings)];
    else {
      if (items.length > settings.max_inputs) {
        throw field.invalid(
          `expected at most ${
            count(settings.max_inputs, "input")
          } in a request, but got ${items.length}`,
        );
      }
      input = Array.isArray(first)
        ? items.map((item) => tokens(item, settings))
        : items.map((item) => text(item, settings));
    }
  }
  const encoding = f.oneOf("encoding_format", ENCODINGS, { optional: true }) ?? "float";
  const max = settings.dimensions ?? undefined;
  const dimensions = f.integer("dimensions", { optional: true, min: 1, ...(max ? { max } : {}) });
  if (dimensions !== undefined && !settings.custom_dimensions) {
    throw unsupportedParameter(
      "dimensions",
      `The model \`${model}\` makes vectors of one length only; leave 'dimensions' out.`,
    );
  }
  return {
    model,
    input,
    encoding_format: encoding,
    dimensions: dimensions ?? null,
    user: f.string("user", { optional: true }) ?? null,
    task_type: f.oneOf("task_type", TASK_TYPES, { optional: true }) ?? null,
  };
}
