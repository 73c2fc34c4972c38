/**
 * Rerank (`POST /v1/rerank`): the validated request every back end gets, what a back end
 * answers, and the response in the shape Cohere v2, Jina, vLLM and TEI's clients share.
 */

/** A validated rerank request: a query and the texts to order by relevance to it. */
export interface RerankRequest {
  model: string;
  query: string;
  /** The documents' texts, in the caller's order (an index names one). */
  documents: string[];
  /** How many results to answer, best first; `null`: all. */
  top_n: number | null;
  /** Whether each result carries its document's text. */
  return_documents: boolean;
}

/** One document's score, by its index in the request. */
export interface RerankScore {
  index: number;
  /** Higher is more relevant (a probability in [0, 1] for most rerankers). */
  score: number;
}

/** A back end's scores (in any order; the front door sorts them) and the tokens it read. */
export interface RerankResult {
  scores: RerankScore[];
  /** Input tokens (the query with each document), as the back end counted them or, when it
   * did not say, the gateway's estimate. */
  tokens: number;
}

/** One result of the response. */
export interface RerankResultItem {
  index: number;
  relevance_score: number;
  /** With `return_documents`. */
  document?: { text: string };
}

/** The response: results sorted by score (descending; ties by index), usage in tokens. */
export interface RerankResponse {
  id: string;
  model: string;
  results: RerankResultItem[];
  usage: { prompt_tokens: number; total_tokens: number };
}
