import { type AnthropicStop, mapAnthropicStopReason } from "../anthropic/stop_reason.ts";

/**
 * Converse's `stopReason` as a finish: Converse names Claude's reasons as the Messages API
 * does (`end_turn`, `stop_sequence`, `max_tokens`, `tool_use`,
 * `model_context_window_exceeded`, mapped as `mapAnthropicStopReason` maps them), and adds its
 * own filters: `guardrail_intervened` and `content_filtered` -> content_filter with the reason
 * as detail.
 */
export function mapConverseStopReason(stopReason: unknown, toolCalled: boolean): AnthropicStop {
  if (stopReason === "guardrail_intervened" || stopReason === "content_filtered") {
    return { finish: "content_filter", detail: stopReason };
  }
  return mapAnthropicStopReason(stopReason, toolCalled);
}
