/**
 * The simulator's reranker: a lexical score, BM25 over the request's own documents on the
 * gateway's tokenizer (words lower-cased), divided by the best score a document could reach,
 * so that it lies in [0, 1). The same request always gets the same scores; documents that
 * hold more of the query's rarer words score higher, which lets demos and tests of retrieval
 * mean something. Usage is the gateway's token count of the query with each document.
 */
import { takeTokens } from "../../canonical/tokens.ts";
import type { RerankRequest, RerankResult } from "../../types/rerank.ts";
import { rerankTokens } from "../rerank_tokens.ts";
import type { CallContext } from "../types.ts";
import { stopIfAborted } from "./abort.ts";

/** BM25's term-frequency saturation and length normalisation (the usual values). */
const K1 = 1.2;
const B = 0.75;
const WORD_START = /^[\p{L}\p{N}_]/u;

/** The words of a text: its tokens that are runs of letters and digits, lower-cased. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const token of takeTokens(text).tokens) {
    const word = token.trim();
    if (WORD_START.test(word)) out.push(word.toLowerCase());
  }
  return out;
}

/** Each document's score for `query`, in the documents' order (rounded to 6 decimals). */
export function lexicalScores(query: string, documents: readonly string[]): number[] {
  const terms = [...new Set(words(query))];
  const docs = documents.map(words);
  const counts = docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const word of doc) tf.set(word, (tf.get(word) ?? 0) + 1);
    return tf;
  });
  const n = docs.length;
  const average = docs.reduce((sum, doc) => sum + doc.length, 0) / n || 1;
  // BM25+'s idf, positive even for a word every document holds.
  const idf = terms.map((term) => {
    const df = counts.filter((tf) => tf.has(term)).length;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  // A term's part tends to idf * (K1 + 1) as its count grows, never reaching it.
  const best = idf.reduce((sum, x) => sum + x, 0) * (K1 + 1);
  return counts.map((tf, i) => {
    if (best === 0) return 0;
    const norm = 1 - B + B * docs[i]!.length / average;
    let score = 0;
    terms.forEach((term, j) => {
      const f = tf.get(term) ?? 0;
      if (f > 0) score += idf[j]! * f * (K1 + 1) / (f + K1 * norm);
    });
    return Math.round(score / best * 1e6) / 1e6;
  });
}

/** Scores every document of the request. */
// deno-lint-ignore require-await -- async so that a caller who left is a rejection, not a throw
export async function simulateRerank(req: RerankRequest, ctx: CallContext): Promise<RerankResult> {
  stopIfAborted(ctx.signal);
  const scores = lexicalScores(req.query, req.documents).map((score, index) => ({
    index,
    score,
  }));
  return { scores, tokens: rerankTokens(req) };
}
