import type { FinishReason } from "../../canonical/result.ts";

/** Why a Gemini answer ended, canonically. */
export interface GeminiFinish {
  finish: FinishReason;
  /** Gemini's own reason when it says more than `finish`. */
  detail?: string;
}

/** Reasons that mean a safety or policy filter stopped the answer. */
const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);
/** Reasons that mean the model's function calling failed. */
const FAILED = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]);

/**
 * A candidate's `finishReason` as a finish: `STOP` -> stop, or tool_calls when the answer
 * called a function (Gemini has no reason of its own for that); `MAX_TOKENS` -> length; the
 * safety, recitation, blocklist and policy reasons -> content_filter; a failed function call
 * -> error; anything else (`OTHER`, `LANGUAGE`...) -> stop; all but the first three with the
 * reason as detail. A prompt blocked before any answer (`promptFeedback.blockReason`) is
 * content_filter with its reason.
 */
export function mapGeminiFinish(
  reason: unknown,
  toolCalled: boolean,
  blockReason: unknown = undefined,
): GeminiFinish {
  if (typeof blockReason === "string") return { finish: "content_filter", detail: blockReason };
  switch (reason) {
    case "STOP":
    case null:
    case undefined:
      return { finish: toolCalled ? "tool_calls" : "stop" };
    case "MAX_TOKENS":
      return { finish: "length" };
  }
  if (typeof reason !== "string") return { finish: "stop" };
  if (FILTERED.has(reason)) return { finish: "content_filter", detail: reason };
  if (FAILED.has(reason)) return { finish: "error", detail: reason };
  return { finish: toolCalled ? "tool_calls" : "stop", detail: reason };
}
