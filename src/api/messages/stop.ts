import type { FinishReason } from "../../canonical/result.ts";
import type { StopReason } from "../../types/anthropic.ts";

/** Every stop reason Anthropic sends. */
const REASONS: readonly StopReason[] = [
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
];

/**
 * Anthropic's `stop_reason` for a canonical finish: the back end's own reason (`detail`) when
 * it is one of Anthropic's; else stop -> `end_turn`, length -> `max_tokens`, tool_calls ->
 * `tool_use`, pause -> `pause_turn`, content_filter -> `refusal`; an error is `end_turn` (the
 * answer so far is all there is).
 */
export function toStopReason(finish: FinishReason, detail: string | undefined): StopReason {
  if (detail !== undefined && (REASONS as readonly string[]).includes(detail)) {
    return detail as StopReason;
  }
  switch (finish) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "pause":
      return "pause_turn";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}
