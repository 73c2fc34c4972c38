/**
 * Embeddings through Bedrock's `InvokeModel` (`POST /model/{modelId}/invoke`), in the model's
 * own body: Amazon Titan (`amazon.titan-embed-*`: one `inputText` per call, `dimensions`,
 * `normalize`) and Cohere (`cohere.embed-*`: up to 96 `texts` per call, `input_type`). Vectors
 * come as floats; base64 is encoded here. Titan counts the input tokens; for Cohere the usage
 * is the gateway's estimate.
 */
import { textInputs, vectorToBase64 } from "../embedding_encoding.ts";
import { countTokens } from "../../canonical/tokens.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { invalidValue } from "../../validation/error.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";
import { bedrockModelPath } from "./model_path.ts";

/** The vector lengths Titan Text Embeddings V2 makes. */
const TITAN_DIMENSIONS = [256, 512, 1024];
/** Cohere's most texts in one call. */
const COHERE_BATCH = 96;
/** Cohere's `input_type`s, and the Gemini-style task types (`task_type`) that mean them. */
const COHERE_INPUT_TYPES: Record<string, string> = {
  search_document: "search_document",
  search_query: "search_query",
  classification: "classification",
  clustering: "clustering",
  RETRIEVAL_DOCUMENT: "search_document",
  RETRIEVAL_QUERY: "search_query",
  CLASSIFICATION: "classification",
  CLUSTERING: "clustering",
};

/** The embedding model families Bedrock serves through this adapter. */
type Family = "titan" | "cohere";

/** The family of a Bedrock model id (an inference profile's region prefix allowed), or `null`. */
export function embeddingFamily(modelId: string): Family | null {
  if (/(?:^|[.:/])amazon\.titan-embed/.test(modelId)) return "titan";
  if (/(?:^|[.:/])cohere\.embed/.test(modelId)) return "cohere";
  return null;
}

/** The body of one Titan call. */
export function toTitanBody(text: string, req: EmbeddingRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { inputText: text };
  if (req.dimensions !== null) {
    if (!TITAN_DIMENSIONS.includes(req.dimensions)) {
      throw invalidValue(
        "dimensions",
        `expected 256, 512 or 1024 for a Titan embedding model, but got ${req.dimensions}`,
      );
    }
    body.dimensions = req.dimensions;
    body.normalize = true;
  }
  return body;
}

/** The body of one Cohere call. */
export function toCohereBody(texts: readonly string[], req: EmbeddingRequest) {
  let inputType = "search_document";
  if (req.task_type !== null) {
    const named = COHERE_INPUT_TYPES[req.task_type];
    if (named === undefined) {
      throw invalidValue(
        "task_type",
        `expected one of search_document, search_query, classification, clustering, but got "${req.task_type}"`,
      );
    }
    inputType = named;
  }
  return { texts: [...texts], input_type: inputType, embedding_types: ["float"] };
}

/** A Titan answer's vector and token count. */
export function readTitan(data: unknown): { vector: number[]; tokens: number | null } {
  const vector = isObject(data) ? data.embedding : undefined;
  if (!isVector(vector)) throw malformed("embeddings answer (no embedding vector)");
  const tokens = isObject(data) && typeof data.inputTextTokenCount === "number"
    ? data.inputTextTokenCount
    : null;
  return { vector, tokens };
}

/** A Cohere answer's vectors, which must be `expected` many (`embeddings` a list of vectors,
 * or by type with `embedding_types`). */
export function readCohere(data: unknown, expected: number): number[][] {
  let vectors = isObject(data) ? data.embeddings : undefined;
  if (isObject(vectors)) vectors = vectors.float;
  if (!Array.isArray(vectors) || vectors.length !== expected || !vectors.every(isVector)) {
    throw malformed(`embeddings answer (expected ${expected} embeddings)`);
  }
  return vectors;
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => typeof v === "number");
}

/** Embeds a request through a Bedrock upstream, Titan or Cohere by the model id. */
export async function bedrockEmbed(
  upstream: Upstream,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  const family = embeddingFamily(ctx.upstreamModel);
  if (family === null) {
    throw invalidValue(
      "model",
      `the Bedrock model behind "${ctx.model.id}" is not a Titan or Cohere embedding model`,
    );
  }
  if (req.user !== null) ctx.dropped.add("user");
  const texts = textInputs(req.input, "Bedrock");
  const path = bedrockModelPath(ctx.upstreamModel, "invoke");
  const vectors: number[][] = [];
  let tokens = 0;
  if (family === "titan") {
    if (req.task_type !== null) ctx.dropped.add("task_type");
    for (const text of texts) {
      const answer = readTitan(
        await upstream.json(chatPost(ctx, path, toTitanBody(text, req), false)),
      );
      vectors.push(answer.vector);
      tokens += answer.tokens ?? countTokens(text);
    }
  } else {
    if (req.dimensions !== null) ctx.dropped.add("dimensions");
    for (let start = 0; start < texts.length; start += COHERE_BATCH) {
      const slice = texts.slice(start, start + COHERE_BATCH);
      const data = await upstream.json(chatPost(ctx, path, toCohereBody(slice, req), false));
      vectors.push(...readCohere(data, slice.length));
    }
    tokens = texts.reduce((n, text) => n + countTokens(text), 0);
  }
  return {
    embeddings: req.encoding_format === "base64" ? vectors.map(vectorToBase64) : vectors,
    promptTokens: tokens,
  };
}
