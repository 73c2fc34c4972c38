import type { Usage } from "../../canonical/result.ts";
import { countField, isObject, usageOf } from "../wire.ts";

/**
 * Canonical usage from Anthropic's: `input_tokens` counts only what came after the last cache
 * breakpoint, so the canonical input (like OpenAI's `prompt_tokens`) adds the tokens read from
 * the cache (`cache_read_input_tokens` -> `cachedInput`) and written to it
 * (`cache_creation_input_tokens` -> `cacheWrite`); `output_tokens_details.thinking_tokens` ->
 * `reasoning`. Missing counts are 0; missing details are left out.
 */
export function fromAnthropicUsage(usage: unknown): Usage {
  if (!isObject(usage)) return usageOf(0, 0);
  const read = count(usage.cache_read_input_tokens);
  const write = count(usage.cache_creation_input_tokens);
  const details = usage.output_tokens_details;
  return usageOf(
    countField(usage, "input_tokens") + (read ?? 0) + (write ?? 0),
    countField(usage, "output_tokens"),
    {
      cachedInput: read,
      cacheWrite: write,
      reasoning: isObject(details) ? count(details.thinking_tokens) : undefined,
    },
  );
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
