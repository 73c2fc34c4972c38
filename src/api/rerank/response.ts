/** The rerank response from a back end's scores: sorted, cut at `top_n`, with the texts asked
 * for, the gateway's model id and the usage. */
import type {
  RerankRequest,
  RerankResponse,
  RerankResult,
  RerankResultItem,
} from "../../types/rerank.ts";

/** The results best first (score descending; equal scores in the documents' order), at most
 * `top_n`, each with its document's text when `return_documents`. */
export function rankedResults(req: RerankRequest, result: RerankResult): RerankResultItem[] {
  const sorted = result.scores.toSorted((a, b) => b.score - a.score || a.index - b.index);
  if (req.top_n !== null && sorted.length > req.top_n) sorted.length = req.top_n;
  return sorted.map(({ index, score }) => {
    const item: RerankResultItem = { index, relevance_score: score };
    if (req.return_documents) item.document = { text: req.documents[index]! };
    return item;
  });
}

/** The whole response for request `id` of model `model` (the gateway's id). */
export function toRerankResponse(
  id: string,
  model: string,
  req: RerankRequest,
  result: RerankResult,
): RerankResponse {
  return {
    id,
    model,
    results: rankedResults(req, result),
    usage: { prompt_tokens: result.tokens, total_tokens: result.tokens },
  };
}
