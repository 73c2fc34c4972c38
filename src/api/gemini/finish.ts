import type { FinishReason } from "../../canonical/result.ts";
import type { GeminiFinishReason } from "../../types/gemini.ts";

/** Gemini's reasons that a back end's detail may name as they are. */
const GEMINI_REASONS: ReadonlySet<string> = new Set<GeminiFinishReason>([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
  "OTHER",
]);

/**
 * A canonical finish as a candidate's `finishReason`: stop, tool calls and a paused turn ->
 * `STOP` (Gemini has no reason of its own for a call); length -> `MAX_TOKENS`; a filter ->
 * `SAFETY`; an error -> `OTHER`; Gemini's own reason when a Gemini back end gave one.
 */
export function toFinishReason(finish: FinishReason, detail?: string): GeminiFinishReason {
  if (detail !== undefined && GEMINI_REASONS.has(detail)) return detail as GeminiFinishReason;
  switch (finish) {
    case "stop":
    case "tool_calls":
    case "pause":
      return "STOP";
    case "length":
      return "MAX_TOKENS";
    case "content_filter":
      return "SAFETY";
    case "error":
      return "OTHER";
  }
}
