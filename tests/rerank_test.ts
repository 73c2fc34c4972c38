/**
 * `POST /v1/rerank` end to end through a real port: against the simulator (sorted results with
 * the right indices, `top_n`, `return_documents`, usage and the log record, validation,
 * capability, keyed and preview models, the `other` limit scope, content logging), and against
 * the fake upstream's vLLM and TEI endpoints (the request each takes, their answers mapped back
 * with the gateway's model id, the upstream fault table, a client disconnect, fallback to
 * another route); the config's rerank fields.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../src/config/parse.ts";
import { rerankTokens } from "../src/providers/rerank_tokens.ts";
import { logRecord } from "./support/client.ts";
import { assertDisconnectAborts, assertFaultMapping } from "./support/fault_mapping.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { FAKE_RERANK_MODEL, fakeRerankScore, fakeRerankTokens } from "./support/fake_rerank.ts";
import { startGateway } from "./support/gateway.ts";
import { expectError, postJson } from "./support/http.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

type Raw = Record<string, unknown> & { models: Record<string, unknown>[] };

const SIM_MODELS = [
  { id: "sim-rerank", provider: "sim", rerank: true },
  { id: "sim-rerank-small", provider: "sim", rerank: { max_documents: 3, max_document_tokens: 8 } },
  { id: "sim-rerank-keyed", provider: "sim", rerank: true, access: "key" },
  { id: "sim-rerank-preview", provider: "sim", rerank: true, access: "preview" },
];

const QUERY = "What is the capital of France?";
const DOCUMENTS = [
  "Berlin is the capital of Germany.",
  "Horses and cows are both animals.",
  "Paris is the capital of France.",
  "The capital of Brazil is Brasilia.",
];

async function setup(patch: (raw: Raw) => void = () => {}) {
  return await startServer({
    config: testConfig((r) => {
      const raw = r as Raw;
      raw.limits = GENEROUS_LIMITS;
      raw.models.push(...SIM_MODELS);
      patch(raw);
    }),
  });
}

function post(server: TestServer, body: unknown, key?: string): Promise<Response> {
  return postJson(`${server.url}/v1/rerank`, body, key);
}

interface Result {
  index: number;
  relevance_score: number;
  document?: { text: string };
}

const sortedDescending = (results: Result[]) =>
  results.every((r, i) => i === 0 || results[i - 1]!.relevance_score >= r.relevance_score);

Deno.test("rerank: the simulator's results, best first with the right indices, usage and the log record", async () => {
  await using server = await setup();
  const res = await post(server, { model: "sim-rerank", query: QUERY, documents: DOCUMENTS });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ["id", "model", "results", "usage"]);
  assert.match(body.id, /^rerank-[0-9a-f]{32}$/);
  assert.equal(body.model, "sim-rerank");
  const results = body.results as Result[];
  assert.deepEqual(results.map((r) => r.index).sort(), [0, 1, 2, 3]);
  assert.ok(sortedDescending(results), JSON.stringify(results));
  assert.equal(results[0]!.index, 2, "Paris first");
  assert.equal(results.at(-1)!.index, 1, "the animals last");
  assert.equal(results.at(-1)!.relevance_score, 0);
  for (const r of results) {
    assert.deepEqual(Object.keys(r).sort(), ["index", "relevance_score"]);
    assert.ok(r.relevance_score >= 0 && r.relevance_score < 1);
  }
  assert.deepEqual(Object.keys(body.usage).sort(), ["prompt_tokens", "total_tokens"]);
  assert.ok(body.usage.total_tokens > 0);
  assert.equal(body.usage.prompt_tokens, body.usage.total_tokens);

  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.path, "/v1/rerank");
  assert.equal(record.model, "sim-rerank");
  assert.equal(record.status, 200);
  assert.equal(record.prompt_tokens, body.usage.total_tokens);
  const logged = JSON.stringify(record);
  assert.ok(!logged.includes("capital") && !logged.includes("Horses"), "no content in the log");

  // Deterministic: the same request, the same answer (but its own id).
  const again = await (await post(server, {
    model: "sim-rerank",
    query: QUERY,
    documents: DOCUMENTS,
  })).json();
  assert.deepEqual(again.results, body.results);
  assert.notEqual(again.id, body.id);
});

Deno.test("rerank: top_n, return_documents and {text} documents", async () => {
  await using server = await setup();
  const all =
    await (await post(server, { model: "sim-rerank", query: QUERY, documents: DOCUMENTS }))
      .json();
  const res = await post(server, {
    model: "sim-rerank",
    query: QUERY,
    documents: DOCUMENTS.map((text, i) => i % 2 === 0 ? { text } : text),
    top_n: 2,
    return_documents: true,
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.results.length, 2);
  (body.results as Result[]).forEach((r, i) => {
    assert.equal(r.index, all.results[i].index);
    assert.equal(r.relevance_score, all.results[i].relevance_score);
    assert.deepEqual(r.document, { text: DOCUMENTS[r.index] });
  });
  assert.deepEqual(body.usage, all.usage, "top_n does not change what was read");
  // A top_n beyond the documents answers them all.
  const many = await (await post(server, {
    model: "sim-rerank",
    query: QUERY,
    documents: DOCUMENTS,
    top_n: 50,
  })).json();
  assert.equal(many.results.length, 4);
  // Equal scores keep the documents' order.
  const ties = await (await post(server, {
    model: "sim-rerank",
    query: "zebra",
    documents: ["one", "two", "three"],
  })).json();
  assert.deepEqual(ties.results.map((r: Result) => r.index), [0, 1, 2]);
});

Deno.test("rerank: validation errors name the field, in OpenAI's error shape", async () => {
  await using server = await setup();
  const cases: [Record<string, unknown>, string, string, RegExp][] = [
    [{ query: "q", documents: ["a"] }, "model", "missing_required_parameter", /'model'/],
    [{ model: "sim-rerank", documents: ["a"] }, "query", "missing_required_parameter", /'query'/],
    [{ model: "sim-rerank", query: "", documents: ["a"] }, "query", "invalid_value", /'query'/],
    [
      { model: "sim-rerank", query: "q", documents: [] },
      "documents",
      "invalid_value",
      /at least 1/,
    ],
    [
      { model: "sim-rerank", query: "q", documents: ["a", ""] },
      "documents[1]",
      "invalid_value",
      /'documents\[1\]'/,
    ],
    [
      { model: "sim-rerank-small", query: "q", documents: ["a", "b", "c", "d"] },
      "documents",
      "invalid_value",
      /at most 3 documents in a request, but got 4/,
    ],
    [
      { model: "sim-rerank-small", query: "q", documents: ["a", "x".repeat(33)] },
      "documents[1]",
      "invalid_value",
      /at most 8 tokens.*33 characters/,
    ],
    [
      { model: "sim-rerank-small", query: "q".repeat(40), documents: ["a"] },
      "query",
      "invalid_value",
      /at most 8 tokens/,
    ],
    [
      { model: "sim-rerank", query: "q", documents: ["a"], top_n: 0 },
      "top_n",
      "invalid_value",
      /'top_n'.*from 1 to 1000/,
    ],
    [
      { model: "sim-rerank-small", query: "q", documents: ["a"], top_n: 4 },
      "top_n",
      "invalid_value",
      /from 1 to 3/,
    ],
  ];
  for (const [body, param, code, message] of cases) {
    await expectError(await post(server, body), 400, {
      type: "invalid_request_error",
      param,
      code,
      message,
    });
  }
  // The default limit is 1000 documents.
  await expectError(
    await post(server, {
      model: "sim-rerank",
      query: "q",
      documents: Array.from({ length: 1001 }, () => "a"),
    }),
    400,
    { param: "documents", message: /at most 1000 documents/ },
  );
});

Deno.test("rerank: a model without rerank is 400 unsupported_capability; keyed and preview models as everywhere", async () => {
  await using server = await setup();
  const body = { query: "q", documents: ["a"] };
  await expectError(await post(server, { model: "sim-chat", ...body }), 400, {
    type: "invalid_request_error",
    code: "unsupported_capability",
    param: "model",
    message: /`sim-chat` does not rerank/,
  });
  await expectError(await post(server, { model: "no-such-model", ...body }), 404, {
    code: "model_not_found",
  });
  await expectError(await post(server, { model: "sim-rerank-keyed", ...body }), 401, {});
  await expectError(await post(server, { model: "sim-rerank-preview", ...body }), 401, {});

  const { keys } = server.app.services;
  const { key: chatOnly } = await keys.create({ name: "t", models: ["sim-chat"] });
  await expectError(await post(server, { model: "sim-rerank-keyed", ...body }, chatOnly), 403, {});
  const { key: plain } = await keys.create({ name: "u" });
  const keyed = await post(server, { model: "sim-rerank-keyed", ...body }, plain);
  assert.equal(keyed.status, 200);
  assert.equal((await keyed.json()).model, "sim-rerank-keyed");
  await expectError(await post(server, { model: "sim-rerank-preview", ...body }, plain), 403, {});
  const { key: preview } = await keys.create({ name: "p", preview: true });
  const previewed = await post(server, { model: "sim-rerank-preview", ...body }, preview);
  assert.equal(previewed.status, 200);
  const record = await logRecord(server, previewed.headers.get("x-request-id"));
  assert.equal(typeof record.key_id, "string");
  assert.equal(record.model, "sim-rerank-preview");
});

Deno.test("rerank: /v1/models shows the capability flag", async () => {
  await using server = await setup();
  const { data } = await (await fetch(`${server.url}/v1/models`)).json();
  const models = data as Record<string, unknown>[];
  assert.equal(models.find((m) => m.id === "sim-rerank")!.rerank, true);
  assert.equal(models.find((m) => m.id === "sim-chat")!.rerank, false);
});

Deno.test("rerank: requests count in the `other` rate-limit scope; content is logged only when asked", async () => {
  await using server = await setup((raw) => {
    raw.limits = {
      ...GENEROUS_LIMITS,
      anonymous: { ...GENEROUS_LIMITS.anonymous, other: { per_minute: 2, per_day: null } },
    };
    raw.logs = { include_content: true };
  });
  const body = { model: "sim-rerank", query: "red apple", documents: ["a red apple", "pears"] };
  const first = await post(server, body);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const record = await logRecord(server, first.headers.get("x-request-id"));
  assert.deepEqual(record.content, { query: "red apple", documents: ["a red apple", "pears"] });
  const second = await post(server, body);
  assert.equal(second.status, 200);
  await second.body?.cancel();
  await expectError(await post(server, body), 429, {});
});

Deno.test("rerank: the tokens count against the chat scope's token limits, settled to what the model read", async () => {
  await using server = await setup((raw) => {
    raw.limits = { anonymous: { chat: { per_minute: 1000, tokens_per_minute: 300 } } };
  });
  const small = await post(server, { model: "sim-rerank", query: "red", documents: ["a red"] });
  assert.equal(small.status, 200);
  assert.ok(small.headers.has("x-ratelimit-limit-tokens"), "the token window is shown");
  await small.body?.cancel();
  const large = await post(server, {
    model: "sim-rerank",
    query: "q",
    documents: Array.from({ length: 20 }, () => "several words ".repeat(10)),
  });
  assert.equal(large.status, 429);
  assert.match(JSON.stringify((await large.json()).error), /token/i);
});

const UPSTREAM_MODELS = [
  { id: "oa-rerank", provider: "oa", upstream_model: FAKE_RERANK_MODEL, rerank: true },
  { id: "oa-rerank-missing", provider: "oa", upstream_model: "rerank-9", rerank: true },
];

const ENDPOINT = {
  path: "/v1/rerank",
  upstreamPath: "/v1/rerank",
  body: { model: "oa-rerank", query: QUERY, documents: DOCUMENTS },
  models: UPSTREAM_MODELS,
};

Deno.test("rerank through vLLM's endpoint: the request with the upstream model, its answer with the gateway's id and usage", async () => {
  await using gateway = await startGateway({ models: UPSTREAM_MODELS });
  const fake = gateway.openai;
  const res = await postJson(`${gateway.server.url}/v1/rerank`, {
    model: "oa-rerank",
    query: QUERY,
    documents: [DOCUMENTS[0], { text: DOCUMENTS[1] }, DOCUMENTS[2], DOCUMENTS[3]],
    top_n: 3,
    return_documents: true,
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.path, "/v1/rerank");
  assert.deepEqual(fake.last.body, {
    model: FAKE_RERANK_MODEL,
    query: QUERY,
    documents: DOCUMENTS,
    top_n: 3,
  });
  assert.equal(body.model, "oa-rerank");
  const expected = DOCUMENTS.map((d, index) => ({ index, score: fakeRerankScore(QUERY, d) }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, 3);
  assert.deepEqual(
    body.results,
    expected.map(({ index, score }) => ({
      index,
      relevance_score: score,
      document: { text: DOCUMENTS[index] },
    })),
  );
  const tokens = fakeRerankTokens(QUERY, DOCUMENTS);
  assert.deepEqual(body.usage, { prompt_tokens: tokens, total_tokens: tokens });
  const record = await logRecord(gateway.server, res.headers.get("x-request-id"));
  assert.equal(record.prompt_tokens, tokens);
  assert.equal(record.provider, "oa");
});

Deno.test("rerank through an upstream: an unknown upstream model is the operator's 502", async () => {
  await using gateway = await startGateway({ models: UPSTREAM_MODELS });
  const missing = await expectError(
    await postJson(`${gateway.server.url}/v1/rerank`, {
      model: "oa-rerank-missing",
      query: "q",
      documents: ["a"],
    }),
    502,
    { code: "upstream_error", message: /does not know the configured model/ },
  );
  assert.ok(!missing.message.includes("rerank-9"), missing.message);
});

Deno.test("rerank through TEI's endpoint: texts sent without a model, the bare array read, cut at top_n, usage estimated", async () => {
  await using fake = startFakeOpenAI();
  // TEI serves rerank at its root: base_url without /v1.
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "tei",
        style: "openai",
        base_url: fake.url,
        api_key_env: "TEI_KEY",
        rerank_format: "tei",
      });
      (raw.models as unknown[]).push({ id: "tei-rerank", provider: "tei", rerank: true });
      raw.limits = GENEROUS_LIMITS;
    }),
    env: (name) => name === "TEI_KEY" ? fake.apiKey : undefined,
  });
  const res = await post(server, {
    model: "tei-rerank",
    query: QUERY,
    documents: DOCUMENTS,
    top_n: 2,
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.path, "/rerank");
  assert.deepEqual(fake.last.body, {
    query: QUERY,
    texts: DOCUMENTS,
    raw_scores: false,
    return_text: false,
  });
  assert.equal(body.model, "tei-rerank");
  assert.deepEqual(body.results.map((r: Result) => r.index), [2, 0]);
  assert.equal(body.results[0].relevance_score, fakeRerankScore(QUERY, DOCUMENTS[2]!));
  // TEI states no usage: the gateway's own count of the query with each document.
  const tokens = rerankTokens({
    model: "tei-rerank",
    query: QUERY,
    documents: DOCUMENTS,
    top_n: 2,
    return_documents: false,
  });
  assert.deepEqual(body.usage, { prompt_tokens: tokens, total_tokens: tokens });
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.prompt_tokens, body.usage.total_tokens);
});

Deno.test("rerank through an upstream: the upstream fault table", async () => {
  await assertFaultMapping(ENDPOINT);
});

Deno.test("rerank through an upstream: a client that disconnects closes the upstream call", async () => {
  await assertDisconnectAborts(ENDPOINT);
});

Deno.test("rerank with routes: a failing upstream route falls back to the simulator", async () => {
  await using gateway = await startGateway({
    provider: { max_retries: 0 },
    models: [{
      id: "routed-rerank",
      rerank: true,
      routes: [
        { provider: "oa", upstream_model: FAKE_RERANK_MODEL, priority: 0 },
        { provider: "sim", upstream_model: "sim-rerank", priority: 1 },
      ],
    }],
  });
  gateway.openai.faults = [{ status: 500 }];
  const res = await postJson(`${gateway.server.url}/v1/rerank`, {
    model: "routed-rerank",
    query: QUERY,
    documents: DOCUMENTS,
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(res.headers.get("x-switchyard-route"), "sim/sim-rerank");
  assert.equal(gateway.openai.received.length, 1);
  assert.equal(body.model, "routed-rerank");
  assert.equal(body.results[0].index, 2);
  // The next one is served by the healthy first route.
  const next = await postJson(`${gateway.server.url}/v1/rerank`, {
    model: "routed-rerank",
    query: QUERY,
    documents: DOCUMENTS,
  });
  assert.equal(next.status, 200);
  assert.equal(next.headers.get("x-switchyard-route"), `oa/${FAKE_RERANK_MODEL}`);
  await next.body?.cancel();
});

Deno.test("config: rerank on a style that cannot serve it, its bounds, the provider's rerank fields, the default config's sim-rerank", async () => {
  const raw = (models: unknown[], providers: unknown[] = []) => ({
    providers: [{ id: "sim", style: "simulator" }, ...providers],
    models,
  });
  const anthropic = { id: "a", style: "anthropic", api_key_env: "K" };
  assert.throws(
    () => parseConfig(raw([{ id: "r", provider: "a", rerank: true }], [anthropic]), "s.json"),
    /models\[0\]\.rerank: provider "a" \(style anthropic\) cannot serve rerank/,
  );
  assert.throws(
    () => parseConfig(raw([{ id: "r", provider: "sim", rerank: { max_docs: 8 } }]), "s.json"),
    /models\[0\]\.rerank\.max_docs: unknown parameter/,
  );
  assert.throws(
    () => parseConfig(raw([{ id: "r", provider: "sim", rerank: { max_documents: 0 } }]), "s.json"),
    /models\[0\]\.rerank\.max_documents/,
  );
  assert.throws(
    () => parseConfig(raw([{ id: "r", provider: "sim", rerank: "yes" }]), "s.json"),
    /models\[0\]\.rerank: expected a boolean or an object/,
  );
  const openai = (extra: Record<string, unknown>) => ({
    id: "o",
    style: "openai",
    base_url: "http://127.0.0.1:1/v1",
    ...extra,
  });
  assert.throws(
    () => parseConfig(raw([], [openai({ rerank_path: "rerank" })]), "s.json"),
    /providers\[1\]\.rerank_path/,
  );
  assert.throws(
    () => parseConfig(raw([], [openai({ rerank_format: "jina" })]), "s.json"),
    /providers\[1\]\.rerank_format.*"cohere" or "tei"/,
  );
  assert.throws(
    () => parseConfig(raw([], [{ ...anthropic, rerank_path: "/rerank" }]), "s.json"),
    /providers\[1\]\.rerank_path: unknown parameter/,
  );
  const config = parseConfig(
    raw([{ id: "r", provider: "sim", rerank: true }, {
      id: "c",
      provider: "sim",
      chat_completions: true,
    }], [
      openai({}),
      openai({ id: "t", rerank_path: "/v2/rerank", rerank_format: "tei" }),
    ]),
    "s.json",
  );
  assert.deepEqual(config.models[0]!.rerank, { max_documents: 1000, max_document_tokens: 8192 });
  assert.ok(!("rerank" in config.models[1]!), "absent, not null, on other models");
  assert.equal(config.providers[1]!.rerank_path, "/rerank");
  assert.equal(config.providers[1]!.rerank_format, "cohere");
  assert.equal(config.providers[2]!.rerank_path, "/v2/rerank");
  assert.equal(config.providers[2]!.rerank_format, "tei");

  const shipped = parseConfig(
    JSON.parse(await Deno.readTextFile("switchyard.json")),
    "switchyard.json",
  );
  const sim = shipped.models.find((m) => m.id === "sim-rerank")!;
  assert.equal(sim.provider, "sim");
  assert.equal(sim.access, "public");
  assert.ok(sim.rerank && !sim.chat_completions, "a rerank model serving nothing else");
});
