/**
 * `POST /v1/embeddings` end to end through a real gateway port, with the `openai` client,
 * against the fake OpenAI upstream: the documented request passed through (`encoding_format`,
 * `dimensions`, `user`), floats and base64 passed back untouched with the gateway's model id
 * and the upstream's usage, an upstream 400 and the upstream fault table, a client disconnect.
 */
import assert from "node:assert/strict";
import { openaiClient } from "./support/client.ts";
import { assertDisconnectAborts, assertFaultMapping } from "./support/fault_mapping.ts";
import { fakeBase64, fakeVector } from "./support/fake_openai_embeddings.ts";
import { startGateway } from "./support/gateway.ts";
import { expectError, postJson } from "./support/http.ts";

const MODELS = [
  { id: "oa-embed", provider: "oa", upstream_model: "text-embedding-3-small", embeddings: true },
  {
    id: "oa-ada",
    provider: "oa",
    upstream_model: "text-embedding-ada-002",
    embeddings: { dimensions: 1536 },
  },
  { id: "oa-missing", provider: "oa", upstream_model: "text-embedding-9", embeddings: true },
];

const ENDPOINT = {
  path: "/v1/embeddings",
  upstreamPath: "/v1/embeddings",
  body: { model: "oa-embed", input: ["one", "two"] },
  models: MODELS,
};

Deno.test("embeddings through an OpenAI-style upstream: floats pass through with the gateway's model id and the upstream's usage", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const fake = gateway.openai;
  const input = ["the first text", "the second one"];
  const res = await client.embeddings.create({
    model: "oa-embed",
    input,
    encoding_format: "float",
    dimensions: 64,
    user: "user-1234",
  });
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 1);
  assert.equal(fake.last.path, "/v1/embeddings");
  assert.deepEqual(fake.last.body, {
    model: "text-embedding-3-small",
    input,
    encoding_format: "float",
    dimensions: 64,
    user: "user-1234",
  });
  assert.equal(res.model, "oa-embed");
  assert.deepEqual(res.data.map((d) => d.index), [0, 1]);
  assert.deepEqual(res.data[0]!.embedding, fakeVector(input[0]!, 64));
  assert.deepEqual(res.data[1]!.embedding, fakeVector(input[1]!, 64));
  assert.deepEqual(res.usage, { prompt_tokens: 6, total_tokens: 6 });
});

Deno.test("embeddings through an OpenAI-style upstream: base64 is passed on as the upstream wrote it", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const fake = gateway.openai;
  const res = await postJson(`${gateway.server.url}/v1/embeddings`, {
    model: "oa-embed",
    input: "some text",
    encoding_format: "base64",
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(fake.last.body, {
    model: "text-embedding-3-small",
    input: ["some text"],
    encoding_format: "base64",
  });
  assert.equal(body.data[0].embedding, fakeBase64(fakeVector("some text", 1536)));
  assert.equal(body.model, "oa-embed");

  // The client's default (base64, decoded by the client) gives the upstream's floats.
  const client = openaiClient(gateway.server);
  const decoded = await client.embeddings.create({ model: "oa-embed", input: "some text" });
  assert.equal((fake.last.body as Record<string, unknown>).encoding_format, "base64");
  assert.deepEqual(decoded.data[0]!.embedding, fakeVector("some text", 1536));
});

Deno.test("embeddings through an OpenAI-style upstream: a batch of 100 and token-id inputs", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const input = Array.from({ length: 100 }, (_, i) => `text ${i}`);
  const res = await client.embeddings.create({ model: "oa-embed", input });
  assert.deepEqual(gateway.openai.violations, []);
  assert.equal(gateway.openai.received.length, 1);
  assert.equal(res.data.length, 100);
  res.data.forEach((d, i) => {
    assert.equal(d.index, i);
    assert.deepEqual(d.embedding, fakeVector(input[i]!, 1536));
  });
  assert.equal(res.usage.prompt_tokens, 200);

  const ids = await client.embeddings.create({
    model: "oa-embed",
    input: [[1, 2, 3], [4, 5]],
    encoding_format: "float",
  });
  assert.deepEqual((gateway.openai.last.body as Record<string, unknown>).input, [[1, 2, 3], [
    4,
    5,
  ]]);
  assert.deepEqual(ids.data[1]!.embedding, fakeVector([4, 5], 1536));
});

Deno.test("embeddings through an OpenAI-style upstream: an upstream 400 is the caller's, an upstream 404 the operator's", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const url = `${gateway.server.url}/v1/embeddings`;
  await expectError(
    await postJson(url, { model: "oa-ada", input: "x", dimensions: 8 }),
    400,
    { type: "invalid_request_error", message: /does not support specifying dimensions/ },
  );
  // The gateway checks its own bound before the upstream is called.
  const before = gateway.openai.received.length;
  await expectError(await postJson(url, { model: "oa-ada", input: "x", dimensions: 2000 }), 400, {
    param: "dimensions",
  });
  assert.equal(gateway.openai.received.length, before);
  // An upstream that does not know the configured model is the operator's fault: a 502.
  const missing = await expectError(await postJson(url, { model: "oa-missing", input: "x" }), 502, {
    code: "upstream_error",
    message: /does not know the configured model/,
  });
  assert.ok(!missing.message.includes("text-embedding-9"), missing.message);
});

Deno.test("embeddings through an OpenAI-style upstream: the upstream fault table", async () => {
  await assertFaultMapping(ENDPOINT);
});

Deno.test("embeddings through an OpenAI-style upstream: a client that disconnects closes the upstream call", async () => {
  await assertDisconnectAborts(ENDPOINT);
});

const GEMINI_MODELS = [
  {
    id: "ge-embed",
    provider: "ge",
    upstream_model: "gemini-embedding-001",
    embeddings: { dimensions: 768 },
  },
];

Deno.test("embeddings through a Gemini-style upstream: batches of 100 in order, floats and base64, outputDimensionality", async () => {
  await using gateway = await startGateway({ models: GEMINI_MODELS });
  const client = openaiClient(gateway.server);
  const fake = gateway.gemini;
  const input = Array.from({ length: 150 }, (_, i) => `passage number ${i}`);
  const floats = await client.embeddings.create({
    model: "ge-embed",
    input,
    encoding_format: "float",
  });
  assert.deepEqual(fake.violations, []);
  assert.deepEqual(fake.received.map((r) => r.path), [
    "/v1beta/models/gemini-embedding-001:batchEmbedContents",
    "/v1beta/models/gemini-embedding-001:batchEmbedContents",
  ]);
  assert.deepEqual(
    fake.received.map((r) => (r.body as { requests: unknown[] }).requests.length),
    [100, 50],
  );
  assert.equal(floats.model, "ge-embed");
  assert.deepEqual(floats.data.map((d) => d.index), input.map((_, i) => i));
  floats.data.forEach((d, i) => assert.deepEqual(d.embedding, fakeVector(input[i]!, 768)));
  assert.ok(floats.usage.prompt_tokens > 0, "the gateway's estimate: Gemini reports none");

  const short = await postJson(`${gateway.server.url}/v1/embeddings`, {
    model: "ge-embed",
    input: ["one text", "another"],
    encoding_format: "base64",
    dimensions: 64,
    task_type: "RETRIEVAL_QUERY",
  });
  assert.equal(short.status, 200);
  const body = await short.json();
  assert.deepEqual(fake.last.body, {
    requests: ["one text", "another"].map((text) => ({
      model: "models/gemini-embedding-001",
      content: { parts: [{ text }] },
      outputDimensionality: 64,
      taskType: "RETRIEVAL_QUERY",
    })),
  });
  assert.equal(body.data[0].embedding, fakeBase64(fakeVector("one text", 64)));
  assert.deepEqual(fake.violations, []);
});

Deno.test("embeddings through a Gemini-style upstream: token ids are refused naming the input, task_type is dropped elsewhere", async () => {
  await using gateway = await startGateway({ models: [...GEMINI_MODELS, ...MODELS] });
  await expectError(
    await postJson(`${gateway.server.url}/v1/embeddings`, {
      model: "ge-embed",
      input: [[1, 2, 3]],
    }),
    400,
    { type: "invalid_request_error", param: "input[0]", message: /Gemini embeds text/ },
  );
  assert.equal(gateway.gemini.received.length, 0);
  const openai = await postJson(`${gateway.server.url}/v1/embeddings`, {
    model: "oa-embed",
    input: "text",
    task_type: "CLUSTERING",
  });
  assert.equal(openai.status, 200);
  assert.equal(openai.headers.get("x-switchyard-dropped-params"), "task_type");
  await openai.body?.cancel();
  assert.equal(
    gateway.openai.last.body && "task_type" in (gateway.openai.last.body as object),
    false,
  );
});
