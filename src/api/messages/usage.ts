import type { Usage } from "../../canonical/result.ts";

/** Anthropic's usage object, as the Messages front door answers it. */
export interface MessagesUsage {
  /** Input tokens after the last cache breakpoint: cached ones not included. */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Anthropic's usage for canonical usage: the canonical input counts every input token, so
 * the tokens read from and written to the cache come off `input_tokens` (the inverse of
 * `providers/anthropic/usage.ts`). */
export function toMessagesUsage(usage: Usage): MessagesUsage {
  const read = usage.cachedInput ?? 0;
  const written = usage.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, usage.input - read - written),
    output_tokens: usage.output,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}
