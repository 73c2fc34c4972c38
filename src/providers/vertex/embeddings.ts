/**
 * Embeddings through Google's text embedding models on Vertex AI (`text-embedding-005`,
 * `text-multilingual-embedding-002`, `gemini-embedding-001`): `POST .../publishers/google/models/
 * {m}:predict` with `{"instances": [{"content", "task_type"?}], "parameters":
 * {"outputDimensionality"?}}`, answered with `predictions[i].embeddings.values` and
 * `.statistics.token_count`. A call takes at most 250 instances and 20,000 tokens
 * (`gemini-embedding-*`: one instance), so larger inputs take several calls, in order.
 * Vertex answers floats: base64 is encoded here. The usage is Vertex's token counts.
 */
import { countTokens } from "../../canonical/tokens.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { textInputs, vectorToBase64 } from "../embedding_encoding.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** Vertex's most instances in one `predict` call of a text embedding model. */
const MAX_INSTANCES = 250;
/** Vertex's most input tokens in one call (the gateway's estimate of them is what is kept
 * under it). */
const MAX_CALL_TOKENS = 20_000;

/** The most instances one call of `model` takes: one for the Gemini embedding models. */
export function instancesPerCall(model: string): number {
  return /^gemini-embedding/.test(model) ? 1 : MAX_INSTANCES;
}

/** The inputs of `texts` split into calls, in order: at most `perCall` texts and (but for a
 * text alone) {@link MAX_CALL_TOKENS} estimated tokens a call. */
export function embeddingCalls(texts: readonly string[], perCall: number): string[][] {
  const calls: string[][] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const text of texts) {
    const size = countTokens(text);
    if (current.length === perCall || (current.length > 0 && tokens + size > MAX_CALL_TOKENS)) {
      calls.push(current);
      current = [];
      tokens = 0;
    }
    current.push(text);
    tokens += size;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

/** The `predict` body for some texts. */
export function toVertexEmbedBody(
  texts: readonly string[],
  req: EmbeddingRequest,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    instances: texts.map((content) =>
      req.task_type === null ? { content } : { content, task_type: req.task_type }
    ),
  };
  if (req.dimensions !== null) body.parameters = { outputDimensionality: req.dimensions };
  return body;
}

/** The vectors of a `predict` answer that must hold `texts.length` of them, and its input
 * tokens (Vertex's `token_count`, else the gateway's estimate of the text). */
export function readVertexEmbeddings(
  data: unknown,
  texts: readonly string[],
): { vectors: number[][]; tokens: number } {
  const predictions = isObject(data) ? data.predictions : undefined;
  if (!Array.isArray(predictions) || predictions.length !== texts.length) {
    throw malformed(`embeddings answer (expected ${texts.length} predictions)`);
  }
  let tokens = 0;
  const vectors = predictions.map((prediction, i) => {
    const embeddings = isObject(prediction) ? prediction.embeddings : undefined;
    const values = isObject(embeddings) ? embeddings.values : undefined;
    if (!Array.isArray(values) || !values.every((v) => typeof v === "number")) {
      throw malformed(`embeddings answer (predictions[${i}].embeddings.values is not a vector)`);
    }
    const statistics = isObject(embeddings) ? embeddings.statistics : undefined;
    const count = isObject(statistics) ? statistics.token_count ?? statistics.tokenCount : null;
    tokens += typeof count === "number" && Number.isFinite(count) && count >= 0
      ? Math.round(count)
      : countTokens(texts[i]!);
    return values as number[];
  });
  return { vectors, tokens };
}

/** Embeds a request through a Google text embedding model at `path` (its `:predict`). */
export async function vertexEmbed(
  upstream: Upstream,
  path: string,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  if (req.user !== null) ctx.dropped.add("user");
  const texts = textInputs(req.input, "Vertex AI");
  const vectors: number[][] = [];
  let promptTokens = 0;
  for (const slice of embeddingCalls(texts, instancesPerCall(ctx.upstreamModel))) {
    const data = await upstream.json(chatPost(ctx, path, toVertexEmbedBody(slice, req), false));
    const read = readVertexEmbeddings(data, slice);
    vectors.push(...read.vectors);
    promptTokens += read.tokens;
  }
  return {
    embeddings: req.encoding_format === "base64" ? vectors.map(vectorToBase64) : vectors,
    promptTokens,
  };
}
