/**
 * Which publisher's model an upstream model name is on Vertex AI, and the path of its methods:
 * `/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`.
 */
import type { VertexConfig, VertexPublisher } from "../../config/types.ts";

/** A model named with its publisher, as Vertex's resource names write it. */
const PUBLISHED = /^publishers\/(google|anthropic)\/models\/(.+)$/;

/** A model on Vertex: whose it is, and its name there. */
export interface VertexModel {
  publisher: VertexPublisher;
  name: string;
}

/**
 * The publisher and name of `upstreamModel`: as written (`publishers/anthropic/models/claude-
 * sonnet-4-5@20250929`); else the provider's `publisher`; else Anthropic's for a name starting
 * with `claude`, Google's for any other.
 */
export function vertexModel(upstreamModel: string, vertex: VertexConfig): VertexModel {
  const published = PUBLISHED.exec(upstreamModel);
  if (published !== null) {
    return { publisher: published[1] as VertexPublisher, name: published[2]! };
  }
  const publisher = vertex.publisher ??
    (/^claude/i.test(upstreamModel) ? "anthropic" : "google");
  return { publisher, name: upstreamModel };
}

/** The path of a method (`generateContent`, `rawPredict`...) of the publisher's model `name`;
 * the name as Vertex writes it (`claude-sonnet-4-5@20250929`: its `@` not escaped). */
export function vertexModelPath(
  vertex: VertexConfig,
  publisher: VertexPublisher,
  name: string,
  method: string,
): string {
  const model = encodeURIComponent(name).replaceAll("%40", "@");
  return `/v1/projects/${encodeURIComponent(vertex.project)}/locations/${
    encodeURIComponent(vertex.region)
  }/publishers/${publisher}/models/${model}:${method}`;
}
