import type { Usage } from "../../canonical/result.ts";
import { countField, isObject, type JsonObject, otherFields, usageOf } from "../wire.ts";

/** The fields of `usage` that canonical usage carries (the detail objects: in part). */
const USAGE_FIELDS: ReadonlySet<string> = new Set([
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "prompt_tokens_details",
  "completion_tokens_details",
]);
const CACHED: ReadonlySet<string> = new Set(["cached_tokens"]);
const REASONING: ReadonlySet<string> = new Set(["reasoning_tokens"]);

/**
 * Canonical usage from an OpenAI `usage` object: `prompt_tokens` (cached tokens included, as
 * canonical input is) -> input, `completion_tokens` (reasoning included) -> output,
 * `prompt_tokens_details.cached_tokens` -> cachedInput, `completion_tokens_details
 * .reasoning_tokens` -> reasoning. Missing counts are 0; missing details stay absent.
 */
export function usageFromOpenAI(value: unknown): Usage {
  if (!isObject(value)) return usageOf(0, 0);
  return usageOf(countField(value, "prompt_tokens"), countField(value, "completion_tokens"), {
    cachedInput: detail(value.prompt_tokens_details, "cached_tokens"),
    reasoning: detail(value.completion_tokens_details, "reasoning_tokens"),
  });
}

/**
 * What an OpenAI `usage` object says beyond canonical usage, in its own shape: other fields
 * (DeepSeek's `prompt_cache_hit_tokens`...) and the detail objects without the modelled counts
 * (`{prompt_tokens_details: {audio_tokens}, completion_tokens_details:
 * {accepted_prediction_tokens, ...}}`); `null` when there is nothing more.
 */
export function usageExtras(value: unknown): JsonObject | null {
  if (!isObject(value)) return null;
  const other = otherFields(value, USAGE_FIELDS);
  const prompt = isObject(value.prompt_tokens_details)
    ? otherFields(value.prompt_tokens_details, CACHED)
    : null;
  const completion = isObject(value.completion_tokens_details)
    ? otherFields(value.completion_tokens_details, REASONING)
    : null;
  if (prompt === null && completion === null) return other;
  const extras: JsonObject = { ...other };
  if (prompt !== null) extras.prompt_tokens_details = prompt;
  if (completion !== null) extras.completion_tokens_details = completion;
  return extras;
}

function detail(details: unknown, key: string): number | undefined {
  if (!isObject(details)) return undefined;
  const value = details[key];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
