import type { Options } from "../../canonical/conversation.ts";

/** The sampling fields of a Messages request. */
export interface AnthropicSampling {
  temperature?: number;
  top_p?: number;
  top_k?: number;
}

/**
 * The sampling fields Anthropic will take, the others added to `dropped` by name. `temperature`
 * passes unchanged, clamped into Anthropic's 0-1 (OpenAI's range is 0-2); with `top_p` as well,
 * only `temperature` is sent (newer models refuse both). With thinking on, Anthropic refuses a
 * `temperature` other than 1, a `top_p` below 0.95 and any `top_k`; models with fixed sampling
 * refuse the same, with `top_p` below 0.99.
 */
export function toAnthropicSampling(
  options: Pick<Options, "temperature" | "topP" | "topK">,
  limits: { thinking: boolean; fixedSampling: boolean },
  dropped: Set<string>,
): AnthropicSampling {
  const out: AnthropicSampling = {};
  const fixed = limits.thinking || limits.fixedSampling;
  if (options.temperature !== undefined) {
    const temperature = Math.min(1, Math.max(0, options.temperature));
    if (fixed && temperature !== 1) dropped.add("temperature");
    else out.temperature = temperature;
  }
  if (options.topP !== undefined) {
    const least = limits.fixedSampling ? 0.99 : limits.thinking ? 0.95 : 0;
    if (out.temperature !== undefined || options.topP < least) dropped.add("top_p");
    else out.top_p = options.topP;
  }
  if (options.topK !== undefined) {
    if (fixed) dropped.add("top_k");
    else out.top_k = options.topK;
  }
  return out;
}
