/**
 * The OpenAI-compatible rerank adapter: the two request bodies (Cohere/vLLM's and TEI's), the
 * two answers read (an object with `results`, TEI's bare array), the token count taken or
 * estimated, malformed answers as 502, against fixtures and the fake upstream.
 */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { OpenAIProvider } from "../../../src/providers/openai/provider.ts";
import { readRerankAnswer, toRerankBody } from "../../../src/providers/openai/rerank.ts";
import type { RerankRequest } from "../../../src/types/rerank.ts";
import { FAKE_RERANK_MODEL, fakeRerankScore } from "../../support/fake_rerank.ts";
import { startFakeOpenAI } from "../../support/fake_openai.ts";
import { callContext, modelRecord, providerDeps } from "../../support/provider_call.ts";

const request = (patch: Partial<RerankRequest> = {}): RerankRequest => ({
  model: "gw-rerank",
  query: "capital of France",
  documents: ["Paris is the capital of France", "Berlin", "France"],
  top_n: null,
  return_documents: false,
  ...patch,
});

Deno.test("toRerankBody: Cohere/vLLM's body with the upstream model and top_n; TEI's with texts", () => {
  assert.deepEqual(toRerankBody(request({ top_n: 2, return_documents: true }), "up", "cohere"), {
    model: "up",
    query: "capital of France",
    documents: ["Paris is the capital of France", "Berlin", "France"],
    top_n: 2,
  });
  assert.deepEqual(toRerankBody(request(), "up", "cohere"), {
    model: "up",
    query: "capital of France",
    documents: ["Paris is the capital of France", "Berlin", "France"],
  });
  assert.deepEqual(toRerankBody(request({ top_n: 2 }), "up", "tei"), {
    query: "capital of France",
    texts: ["Paris is the capital of France", "Berlin", "France"],
    raw_scores: false,
    return_text: false,
  });
});

Deno.test("readRerankAnswer: vLLM's and Jina's results, Cohere's meta, TEI's array", () => {
  const vllm = {
    id: "rerank-1",
    model: "up",
    usage: { total_tokens: 21 },
    results: [
      { index: 2, document: { text: "France" }, relevance_score: 0.5 },
      { index: 0, document: { text: "Paris" }, relevance_score: 0.99 },
    ],
  };
  assert.deepEqual(readRerankAnswer(vllm, request()), {
    scores: [{ index: 2, score: 0.5 }, { index: 0, score: 0.99 }],
    tokens: 21,
  });
  const jina = { model: "up", usage: { prompt_tokens: 9, total_tokens: 9 }, results: [] };
  assert.equal(readRerankAnswer(jina, request()).tokens, 9);
  const cohere = {
    id: "c",
    results: [{ index: 1, relevance_score: 0.1 }],
    meta: { api_version: { version: "2" }, billed_units: { search_units: 1 } },
  };
  // No token count stated: the gateway's estimate (3 tokens of query a document, 6 + 1 + 1).
  assert.deepEqual(readRerankAnswer(cohere, request()), {
    scores: [{ index: 1, score: 0.1 }],
    tokens: 3 * 3 + 6 + 1 + 1,
  });
  const tei = [{ index: 0, score: 0.9 }, { index: 1, score: 0.01 }, { index: 2, score: 0.2 }];
  assert.deepEqual(readRerankAnswer(tei, request()).scores, [
    { index: 0, score: 0.9 },
    { index: 1, score: 0.01 },
    { index: 2, score: 0.2 },
  ]);
});

Deno.test("readRerankAnswer: a malformed answer is a 502", () => {
  const bad: unknown[] = [
    {},
    "text",
    { results: [{ index: 3, relevance_score: 0.1 }] },
    { results: [{ index: -1, relevance_score: 0.1 }] },
    { results: [{ index: 0.5, relevance_score: 0.1 }] },
    { results: [{ index: 0, relevance_score: 0.1 }, { index: 0, relevance_score: 0.2 }] },
    { results: [{ index: 0, relevance_score: "high" }] },
    { results: [{ index: 0, score: 0.3 }] },
    [{ index: 0, relevance_score: 0.3 }],
    [null],
  ];
  for (const data of bad) {
    assert.throws(() => readRerankAnswer(data, request()), (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 502, JSON.stringify(data));
      assert.match(e.message, /malformed rerank answer/);
      return true;
    });
  }
});

Deno.test("OpenAIProvider.rerank: rerank_path and rerank_format reach the fake's vLLM and TEI endpoints", async () => {
  await using fake = startFakeOpenAI();
  const record = modelRecord({ id: "gw-rerank", upstream_model: FAKE_RERANK_MODEL });
  const vllm = new OpenAIProvider(providerDeps("openai", `${fake.url}/v1`, fake.apiKey));
  const result = await vllm.rerank(request({ top_n: 2 }), callContext(record));
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.path, "/v1/rerank");
  assert.deepEqual(result.scores.map((s) => s.index), [0, 2]);
  assert.equal(
    result.scores[0]!.score,
    fakeRerankScore("capital of France", request().documents[0]!),
  );

  const tei = new OpenAIProvider(
    providerDeps("openai", fake.url, fake.apiKey, { rerank_format: "tei" }),
  );
  const all = await tei.rerank(request({ top_n: 1 }), callContext(record));
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.path, "/rerank");
  assert.equal(all.scores.length, 3, "TEI answers every text; the front door cuts at top_n");

  const v2 = new OpenAIProvider(
    providerDeps("openai", fake.url, fake.apiKey, { rerank_path: "/v1/rerank" }),
  );
  await v2.rerank(request(), callContext(record));
  assert.equal(fake.last.path, "/v1/rerank");
});
