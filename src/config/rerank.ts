/** A model's `rerank` entry: whether it serves `POST /v1/rerank`, and the request bounds. */
import type { Reader } from "../validation/reader.ts";
import type { RerankConfig } from "./types.ts";

/** Documents in one request by default: Cohere's own bound. */
export const DEFAULT_MAX_DOCUMENTS = 1000;
/** Tokens of the query and of each document by default. */
export const DEFAULT_MAX_DOCUMENT_TOKENS = 8192;

/** A model's `rerank`: `undefined` when absent, `null` or `false`; `true` reads as `{}`, every
 * default. */
export function readRerank(r: Reader): RerankConfig | undefined {
  if (r.value === undefined || r.value === null || r.value === false) return undefined;
  const f = (r.value === true ? r.with({}) : r).object({ expected: "a boolean or an object" });
  const rerank: RerankConfig = {
    max_documents: f.integer("max_documents", { optional: true, min: 1, max: 100_000 }) ??
      DEFAULT_MAX_DOCUMENTS,
    max_document_tokens:
      f.integer("max_document_tokens", { optional: true, min: 1, max: 10_000_000 }) ??
        DEFAULT_MAX_DOCUMENT_TOKENS,
  };
  f.done();
  return rerank;
}
