/**
 * The fake OpenAI-compatible upstream's rerank endpoints, byte for byte as the servers write
 * them:
 *
 * - `POST /v1/rerank`, vLLM's (the Cohere v2 / Jina shape): the request checked against it
 *   (only `model`, `query`, `documents` as non-empty strings, `top_n`, `return_documents`,
 *   `max_tokens_per_doc`), answered `{id, model, usage: {total_tokens}, results: [{index,
 *   document: {text}, relevance_score}]}`, best first, cut at `top_n`. A model other than
 *   {@link FAKE_RERANK_MODEL} is a 404 `model_not_found`.
 * - `POST /rerank`, text-embeddings-inference's: `{query, texts, raw_scores, return_text,
 *   truncate}` (no model: TEI serves one), answered with a bare array `[{index, score}]`, best
 *   first, and no usage.
 *
 * A score is the share of the query's words a document holds (not the simulator's BM25, so
 * that a test can tell which one answered); tokens are whitespace-separated words, the query's
 * counted once a document.
 */
import { checkOpenAIHeaders, isObj } from "./fake_openai.ts";
import { modelNotFound } from "./fake_openai_moderation.ts";
import type { Answer, FakeRoute } from "./fake_upstream.ts";

/** The one model the fake's vLLM endpoint serves. */
export const FAKE_RERANK_MODEL = "bge-reranker-up";

type ErrorBody = (status: number, type: string, message: string, code?: string) => unknown;

const VLLM_FIELDS = new Set([
  "model",
  "query",
  "documents",
  "top_n",
  "return_documents",
  "max_tokens_per_doc",
]);
const TEI_FIELDS = new Set([
  "query",
  "texts",
  "raw_scores",
  "return_text",
  "truncate",
  "truncation_direction",
]);

const words = (text: string) => text.toLowerCase().match(/\w+/g) ?? [];

/** The fake's score of `document` for `query`: the share of the query's words it holds. */
export function fakeRerankScore(query: string, document: string): number {
  const q = new Set(words(query));
  const d = new Set(words(document));
  if (q.size === 0) return 0;
  return Math.round([...q].filter((w) => d.has(w)).length / q.size * 1000) / 1000;
}

/** The fake's token count of a request. */
export function fakeRerankTokens(query: string, documents: string[]): number {
  const count = (text: string) => text.split(/\s+/).filter(Boolean).length;
  return documents.reduce((sum, d) => sum + count(query) + count(d), 0);
}

/** The documents' indices and scores, best first (ties in order). */
function ranked(query: string, documents: string[]): { index: number; score: number }[] {
  return documents
    .map((d, index) => ({ index, score: fakeRerankScore(query, d) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

const isTexts = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string" && s !== "");

function checkFields(body: unknown, fields: Set<string>, headers: Headers, key: string) {
  const bad = checkOpenAIHeaders(headers, key);
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  for (const name of Object.keys(body)) {
    if (!fields.has(name)) bad.push(`unknown field: ${name}`);
  }
  if (typeof body.query !== "string" || body.query === "") bad.push("query: a non-empty string");
  return bad;
}

/** vLLM's `/v1/rerank`. */
function vllmRoute(apiKey: string, errorBody: ErrorBody): FakeRoute {
  return {
    check(headers, body) {
      const bad = checkFields(body, VLLM_FIELDS, headers, apiKey);
      if (!isObj(body)) return bad;
      if (typeof body.model !== "string" || body.model === "") bad.push("model: a string");
      if (!isTexts(body.documents)) bad.push("documents: non-empty strings");
      const n = body.top_n;
      if (n !== undefined && (!Number.isInteger(n) || (n as number) < 1)) {
        bad.push("top_n: an integer of at least 1");
      }
      return bad;
    },
    answer(body): Answer {
      const model = body.model as string;
      if (model !== FAKE_RERANK_MODEL) return modelNotFound(model, errorBody);
      const query = body.query as string;
      const documents = body.documents as string[];
      const results = ranked(query, documents)
        .slice(0, (body.top_n as number | undefined) ?? documents.length)
        .map(({ index, score }) => ({
          index,
          document: { text: documents[index] },
          relevance_score: score,
        }));
      return {
        kind: "json",
        status: 200,
        body: {
          id: "rerank-fake0001",
          model,
          usage: { total_tokens: fakeRerankTokens(query, documents) },
          results,
        },
      };
    },
  };
}

/** text-embeddings-inference's `/rerank`. */
function teiRoute(apiKey: string): FakeRoute {
  return {
    check(headers, body) {
      const bad = checkFields(body, TEI_FIELDS, headers, apiKey);
      if (!isObj(body)) return bad;
      if (!isTexts(body.texts)) bad.push("texts: non-empty strings");
      for (const flag of ["raw_scores", "return_text", "truncate"]) {
        if (body[flag] !== undefined && typeof body[flag] !== "boolean") {
          bad.push(`${flag}: a boolean`);
        }
      }
      return bad;
    },
    answer(body): Answer {
      const texts = body.texts as string[];
      return { kind: "json", status: 200, body: ranked(body.query as string, texts) };
    },
  };
}

/** The fake OpenAI upstream's rerank routes by path. */
export function rerankRoutes(apiKey: string, errorBody: ErrorBody): Record<string, FakeRoute> {
  return { "/v1/rerank": vllmRoute(apiKey, errorBody), "/rerank": teiRoute(apiKey) };
}
