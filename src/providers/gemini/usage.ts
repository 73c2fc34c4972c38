import type { Usage } from "../../canonical/result.ts";
import { countField, isObject, usageOf } from "../wire.ts";

/**
 * Canonical usage from Gemini's `usageMetadata`: input is `promptTokenCount` (which includes
 * the cached content) plus `toolUsePromptTokenCount`; output is `candidatesTokenCount` plus
 * `thoughtsTokenCount` (Gemini counts thoughts apart, OpenAI inside completion tokens), the
 * thoughts also as `reasoning`; `cachedContentTokenCount` -> `cachedInput`. Missing counts are
 * 0; missing details are left out.
 */
export function fromGeminiUsage(usage: unknown): Usage {
  if (!isObject(usage)) return usageOf(0, 0);
  const thoughts = count(usage.thoughtsTokenCount);
  return usageOf(
    countField(usage, "promptTokenCount") + countField(usage, "toolUsePromptTokenCount"),
    countField(usage, "candidatesTokenCount") + (thoughts ?? 0),
    { cachedInput: count(usage.cachedContentTokenCount), reasoning: thoughts },
  );
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
