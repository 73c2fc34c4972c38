import type { Usage } from "../../canonical/result.ts";
import type { WireUsage } from "./wire.ts";

/** A canonical usage as OpenAI's: the totals, and the cache and reasoning details where the
 * back end reported them (`cache_creation_tokens` is not OpenAI's own; Anthropic has it). */
export function renderUsage(usage: Usage): WireUsage {
  const wire: WireUsage = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  if (usage.cachedInput !== undefined || usage.cacheWrite !== undefined) {
    wire.prompt_tokens_details = { cached_tokens: usage.cachedInput ?? 0 };
    if (usage.cacheWrite !== undefined) {
      wire.prompt_tokens_details.cache_creation_tokens = usage.cacheWrite;
    }
  }
  if (usage.reasoning !== undefined) {
    wire.completion_tokens_details = { reasoning_tokens: usage.reasoning };
  }
  return wire;
}
