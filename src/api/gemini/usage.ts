import type { Usage } from "../../canonical/result.ts";
import type { UsageMetadata } from "../../types/gemini.ts";

/**
 * Canonical usage as Gemini's `usageMetadata`: `promptTokenCount` is every input token (cached
 * ones included, as Gemini counts), `thoughtsTokenCount` the reasoning tokens, counted apart
 * from `candidatesTokenCount` as Gemini does (the canonical output includes them), and
 * `totalTokenCount` the sum.
 */
export function toUsageMetadata(usage: Usage): UsageMetadata {
  const thoughts = Math.min(usage.reasoning ?? 0, usage.output);
  const metadata: UsageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output - thoughts,
    totalTokenCount: usage.input + usage.output,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.input }],
  };
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  if (usage.cachedInput) metadata.cachedContentTokenCount = usage.cachedInput;
  return metadata;
}
