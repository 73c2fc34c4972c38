/**
 * Rerank through an OpenAI-compatible provider's `POST {base_url}{rerank_path}`, in one of
 * the two bodies rerank servers take (`rerank_format`): `cohere` (`{model, query, documents,
 * top_n}`: Cohere v2, Jina, vLLM, llama.cpp, Infinity) or `tei` (`{query, texts}`:
 * text-embeddings-inference, which serves one model and answers every text). Either answer is
 * read: an object with `results: [{index, relevance_score}]` and `usage.total_tokens`
 * (Cohere, vLLM, Jina), or TEI's bare array `[{index, score}]`. An answer that states no token
 * count gets the gateway's estimate.
 */
import type { RerankFormat } from "../../config/types.ts";
import type { RerankRequest, RerankResult, RerankScore } from "../../types/rerank.ts";
import { rerankTokens } from "../rerank_tokens.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** The upstream request body for `req` in `format`. */
export function toRerankBody(
  req: RerankRequest,
  upstreamModel: string,
  format: RerankFormat,
): Record<string, unknown> {
  if (format === "tei") {
    return { query: req.query, texts: req.documents, raw_scores: false, return_text: false };
  }
  const body: Record<string, unknown> = {
    model: upstreamModel,
    query: req.query,
    documents: req.documents,
  };
  if (req.top_n !== null) body.top_n = req.top_n;
  return body;
}

/** A token count the answer states, or `null`. */
function statedTokens(data: unknown): number | null {
  if (!isObject(data)) return null;
  const usage = isObject(data.usage) ? data.usage : {};
  const billed = isObject(data.meta) && isObject(data.meta.billed_units)
    ? data.meta.billed_units
    : {};
  for (const value of [usage.total_tokens, usage.prompt_tokens, billed.input_tokens]) {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  }
  return null;
}

/** Reads a rerank answer for `req`: every index in range and named once, every score a
 * finite number; a 502 otherwise. */
export function readRerankAnswer(data: unknown, req: RerankRequest): RerankResult {
  const tei = Array.isArray(data);
  const items = tei ? data : isObject(data) ? data.results : undefined;
  if (!Array.isArray(items)) throw malformed("rerank answer (no results array)");
  const seen = new Set<number>();
  const scores: RerankScore[] = items.map((item, i) => {
    const index = isObject(item) ? item.index : undefined;
    const score = isObject(item) ? (tei ? item.score : item.relevance_score) : undefined;
    if (
      typeof index !== "number" || !Number.isInteger(index) || index < 0 ||
      index >= req.documents.length || seen.has(index)
    ) {
      throw malformed(`rerank answer (result ${i} has no index of its own in range)`);
    }
    if (typeof score !== "number" || !Number.isFinite(score)) {
      throw malformed(`rerank answer (result ${i} has no score)`);
    }
    seen.add(index);
    return { index, score };
  });
  return { scores, tokens: statedTokens(data) ?? rerankTokens(req) };
}

/** Reranks a request through an OpenAI-compatible upstream at `path`. */
export async function openAIRerank(
  upstream: Upstream,
  path: string,
  format: RerankFormat,
  req: RerankRequest,
  ctx: CallContext,
): Promise<RerankResult> {
  const body = toRerankBody(req, ctx.upstreamModel, format);
  const data = await upstream.json(chatPost(ctx, path, body, false));
  return readRerankAnswer(data, req);
}
