/**
 * Embeddings through Gemini's `batchEmbedContents`: one request per input text (at most 100 a
 * call, Gemini's limit, so larger batches take several calls, in order), `dimensions` as
 * `outputDimensionality`, the request's `task_type` as `taskType`. Gemini answers floats and no
 * token count: base64 is encoded here, and the usage is the gateway's estimate.
 */
import { textInputs, vectorToBase64 } from "../embedding_encoding.ts";
import { countTokens } from "../../canonical/tokens.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";
import { modelPath } from "./model_path.ts";

/** Gemini's most requests in one `batchEmbedContents`. */
const BATCH = 100;

/** The `batchEmbedContents` body for some texts. */
export function toGeminiEmbedBody(
  texts: readonly string[],
  req: EmbeddingRequest,
  upstreamModel: string,
): Record<string, unknown> {
  const model = `models/${upstreamModel.replace(/^models\//, "")}`;
  return {
    requests: texts.map((text) => {
      const one: Record<string, unknown> = { model, content: { parts: [{ text }] } };
      if (req.dimensions !== null) one.outputDimensionality = req.dimensions;
      if (req.task_type !== null) one.taskType = req.task_type;
      return one;
    }),
  };
}

/** The vectors of a `batchEmbedContents` answer that must hold `expected` of them. */
export function readGeminiEmbeddings(data: unknown, expected: number): number[][] {
  const items = isObject(data) ? data.embeddings : undefined;
  if (!Array.isArray(items) || items.length !== expected) {
    throw malformed(`embeddings answer (expected ${expected} embeddings)`);
  }
  return items.map((item, i) => {
    const values = isObject(item) ? item.values : undefined;
    if (!Array.isArray(values) || !values.every((v) => typeof v === "number")) {
      throw malformed(`embeddings answer (embeddings[${i}].values is not a vector)`);
    }
    return values as number[];
  });
}

/** Embeds a request through a Gemini upstream. */
export async function geminiEmbed(
  upstream: Upstream,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  if (req.user !== null) ctx.dropped.add("user");
  const texts = textInputs(req.input, "Gemini");
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += BATCH) {
    const slice = texts.slice(start, start + BATCH);
    const body = toGeminiEmbedBody(slice, req, ctx.upstreamModel);
    const path = modelPath(ctx.upstreamModel, "batchEmbedContents");
    const data = await upstream.json(chatPost(ctx, path, body, false));
    vectors.push(...readGeminiEmbeddings(data, slice.length));
  }
  return {
    embeddings: req.encoding_format === "base64" ? vectors.map(vectorToBase64) : vectors,
    promptTokens: texts.reduce((n, text) => n + countTokens(text), 0),
  };
}
