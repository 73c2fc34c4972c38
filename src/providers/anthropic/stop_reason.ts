import type { FinishReason } from "../../canonical/result.ts";

/** Why an Anthropic answer ended, canonically. */
export interface AnthropicStop {
  finish: FinishReason;
  /** Anthropic's own reason when it says more than `finish`. */
  detail?: string;
}

/**
 * Anthropic's `stop_reason` as a finish: `end_turn` and `stop_sequence` -> stop; `max_tokens`
 * -> length (a full context window too, with its reason as detail); `tool_use` -> tool_calls, or
 * stop when no call of the caller's tools came (the forced JSON tool answered); `pause_turn`
 * -> pause and `refusal` -> content_filter, each with its reason as detail; an unknown reason ->
 * stop with the reason as detail; none -> stop.
 */
export function mapAnthropicStopReason(stopReason: unknown, toolCalled: boolean): AnthropicStop {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
    case null:
    case undefined:
      return { finish: "stop" };
    case "max_tokens":
      return { finish: "length" };
    case "model_context_window_exceeded":
      return { finish: "length", detail: stopReason };
    case "tool_use":
      return { finish: toolCalled ? "tool_calls" : "stop" };
    case "pause_turn":
      return { finish: "pause", detail: stopReason };
    case "refusal":
      return { finish: "content_filter", detail: stopReason };
    default:
      return typeof stopReason === "string"
        ? { finish: "stop", detail: stopReason }
        : { finish: "stop" };
  }
}
