import { ApiError } from "../../errors.ts";
import { clip } from "../../quote.ts";

/** The methods of a model that the Gemini front door serves. */
export const GEMINI_METHODS = ["generateContent", "streamGenerateContent", "countTokens"] as const;

/** One of {@link GEMINI_METHODS}. */
export type GeminiMethod = typeof GEMINI_METHODS[number];

/** A model's method as a path names it: `{model}:{method}`. */
export interface ModelMethod {
  model: string;
  method: GeminiMethod;
}

/** The model and method of the last path segment (`gemini-2.5-flash:generateContent`); a
 * segment without a method, or with one the gateway does not serve, is a 404. */
export function modelMethod(segment: string): ModelMethod {
  const at = segment.lastIndexOf(":");
  const method = at < 0 ? "" : segment.slice(at + 1);
  const model = segment.slice(0, at).replace(/^models\//, "");
  if (at <= 0 || !(GEMINI_METHODS as readonly string[]).includes(method)) {
    throw new ApiError(
      404,
      "invalid_request_error",
      `Unknown method ${JSON.stringify(clip(method || segment))} of a model: expected ${
        GEMINI_METHODS.map((m) => `{model}:${m}`).join(", ")
      }.`,
      { code: "unknown_url" },
    );
  }
  return { model, method: method as GeminiMethod };
}
