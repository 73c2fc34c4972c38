import type { Extras, Part } from "./conversation.ts";

/** Why the model stopped: `pause` is a turn the upstream paused (Anthropic's `pause_turn`) and
 * that the client may continue; `content_filter` includes refusals. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "pause" | "error";

/** Tokens of one call. `input` counts every input token, cached ones included. */
export interface Usage {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedInput?: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheWrite?: number;
  /** Output tokens spent on reasoning. */
  reasoning?: number;
}

/** A model's whole answer, as every back end produces it. */
export interface CanonicalResult {
  /** The upstream's id of the answer, when it gave one. */
  id?: string;
  /** The assistant's parts in order: reasoning, text, refusal, tool calls. */
  parts: Part[];
  finish: FinishReason;
  /** The upstream's own stop reason when it says more than `finish` (`pause_turn`, `refusal`). */
  stopDetail?: string;
  usage: Usage;
  /** Response fields of the back end's protocol not modelled here (`system_fingerprint`,
   * `service_tier`, `logprobs`, usage details...), for a front door of the same protocol. */
  extras?: Extras;
}
