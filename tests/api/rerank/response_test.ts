import assert from "node:assert/strict";
import { rankedResults, toRerankResponse } from "../../../src/api/rerank/response.ts";
import type { RerankRequest } from "../../../src/types/rerank.ts";

const request = (patch: Partial<RerankRequest> = {}): RerankRequest => ({
  model: "rr",
  query: "q",
  documents: ["zero", "one", "two", "three"],
  top_n: null,
  return_documents: false,
  ...patch,
});

const SCORES = [
  { index: 2, score: 0.5 },
  { index: 0, score: 0.1 },
  { index: 3, score: 0.5 },
  { index: 1, score: 0.9 },
];

Deno.test("rankedResults: best first, equal scores in the documents' order", () => {
  assert.deepEqual(rankedResults(request(), { scores: SCORES, tokens: 0 }), [
    { index: 1, relevance_score: 0.9 },
    { index: 2, relevance_score: 0.5 },
    { index: 3, relevance_score: 0.5 },
    { index: 0, relevance_score: 0.1 },
  ]);
});

Deno.test("rankedResults: top_n cuts, return_documents adds each document's text", () => {
  assert.deepEqual(
    rankedResults(request({ top_n: 2, return_documents: true }), { scores: SCORES, tokens: 0 }),
    [
      { index: 1, relevance_score: 0.9, document: { text: "one" } },
      { index: 2, relevance_score: 0.5, document: { text: "two" } },
    ],
  );
  // More than there are: all of them.
  assert.equal(rankedResults(request({ top_n: 10 }), { scores: SCORES, tokens: 0 }).length, 4);
});

Deno.test("toRerankResponse: the gateway's model id and the tokens as usage", () => {
  const response = toRerankResponse("rerank-1", "gw", request({ top_n: 1 }), {
    scores: SCORES,
    tokens: 12,
  });
  assert.deepEqual(response, {
    id: "rerank-1",
    model: "gw",
    results: [{ index: 1, relevance_score: 0.9 }],
    usage: { prompt_tokens: 12, total_tokens: 12 },
  });
});
