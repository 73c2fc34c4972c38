/**
 * A canonical result as Gemini's `GenerateContentResponse`: one candidate (index 0) with the
 * answer's parts (parts.ts) in a `model` content and its `finishReason`, `usageMetadata`,
 * `modelVersion` (the gateway's model id) and `responseId` (the back end's id, else the
 * request's).
 */
import type { CanonicalResult } from "../../canonical/result.ts";
import type { GenerateContentResponse } from "../../types/gemini.ts";
import { toFinishReason } from "./finish.ts";
import { toGeminiParts } from "./parts.ts";
import { toUsageMetadata } from "./usage.ts";

/** What the answer says besides the result. */
export interface GeminiHead {
  /** The gateway's model id. */
  model: string;
  /** The gateway's request id: the response id when the back end gives none. */
  requestId: string;
  includeThoughts: boolean;
}

/** The response for a whole result. */
export function renderGenerateContent(
  result: CanonicalResult,
  head: GeminiHead,
): GenerateContentResponse {
  return {
    candidates: [{
      content: { role: "model", parts: toGeminiParts(result.parts, head.includeThoughts) },
      finishReason: toFinishReason(result.finish, result.stopDetail),
      index: 0,
    }],
    usageMetadata: toUsageMetadata(result.usage),
    modelVersion: head.model,
    responseId: responseId(result.id, head.requestId),
  };
}

/** The answer's id: the back end's, else the request's. */
export function responseId(id: string | undefined, requestId: string): string {
  return id ?? requestId;
}
