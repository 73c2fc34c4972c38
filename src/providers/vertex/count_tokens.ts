/**
 * A Gemini API `countTokens` body as Vertex AI takes it. The Gemini API takes either
 * `contents` or a whole `generateContentRequest` (whose `model` is `models/{m}`); Vertex's
 * CountTokensRequest has no `generateContentRequest`: its `contents`, `systemInstruction`,
 * `tools` and `generationConfig` are top-level fields, and its `model` is the publisher
 * model's resource name (`projects/{p}/locations/{l}/publishers/google/models/{m}`).
 */
import type { VertexConfig } from "../../config/types.ts";
import { isObject, type JsonObject } from "../wire.ts";

/** The fields of a GenerateContentRequest that Vertex's CountTokensRequest has too. */
const COUNTED = ["contents", "systemInstruction", "tools", "generationConfig"] as const;

/** The resource name of Google's model `name` in the provider's project and region. */
export function vertexResourceName(vertex: VertexConfig, name: string): string {
  return `projects/${vertex.project}/locations/${vertex.region}/publishers/google/models/${name}`;
}

/** `body` with a `generateContentRequest` unwrapped into Vertex's fields (see the module
 * doc); a body without one is Vertex's already and is returned as it is. */
export function toVertexCountTokens(
  body: JsonObject,
  vertex: VertexConfig,
  name: string,
): JsonObject {
  const whole = body.generateContentRequest;
  if (!isObject(whole)) return body;
  const { generateContentRequest: _, ...rest } = body;
  const counted: JsonObject = { ...rest, model: vertexResourceName(vertex, name) };
  for (const field of COUNTED) {
    if (whole[field] !== undefined && counted[field] === undefined) counted[field] = whole[field];
  }
  return counted;
}
