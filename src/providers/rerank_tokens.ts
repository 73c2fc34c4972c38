/** The gateway's estimate of a rerank call's input tokens, for back ends that do not count
 * them: a cross-encoder reads the query with each document, so the query counts once a
 * document. */
import { countTokens } from "../canonical/tokens.ts";
import type { RerankRequest } from "../types/rerank.ts";

/** The query's tokens once per document, plus the documents' tokens. */
export function rerankTokens(req: RerankRequest): number {
  let tokens = countTokens(req.query) * req.documents.length;
  for (const document of req.documents) tokens += countTokens(document);
  return tokens;
}
