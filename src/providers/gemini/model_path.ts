/** The version of Gemini's API the paths are under. */
const API_VERSION = "v1beta";

/** The path of a model's method: `/v1beta/models/{model}:{method}` (a `models/` prefix in the
 * configured id is allowed). */
export function modelPath(upstreamModel: string, method: string): string {
  const name = upstreamModel.replace(/^models\//, "");
  return `/${API_VERSION}/models/${encodeURIComponent(name)}:${method}`;
}
