/**
 * `POST /v1/embeddings` end to end through a real port, with the official `openai` client,
 * against the simulator: OpenAI's response shape, batches, `base64`, `dimensions`, usage and
 * the log record, the simulator's similarity property, validation, capability and access.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { parseConfig } from "../src/config/parse.ts";
import { logRecord, openaiClient } from "./support/client.ts";
import { expectError, postJson } from "./support/http.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

type Raw = Record<string, unknown> & { models: Record<string, unknown>[] };

const EMBED_MODELS = [
  { id: "sim-embed", provider: "sim", embeddings: true },
  {
    id: "sim-embed-small",
    provider: "sim",
    embeddings: { dimensions: 32, max_inputs: 3, max_input_tokens: 8 },
  },
  { id: "sim-embed-fixed", provider: "sim", embeddings: { custom_dimensions: false } },
  { id: "sim-embed-keyed", provider: "sim", embeddings: true, access: "key" },
];

async function setup(patch: (raw: Raw) => void = () => {}) {
  const server = await startServer({
    config: testConfig((r) => {
      const raw = r as Raw;
      raw.limits = GENEROUS_LIMITS;
      raw.models.push(...EMBED_MODELS);
      patch(raw);
    }),
  });
  return { server, client: openaiClient(server) };
}

function post(server: TestServer, body: unknown, key?: string): Promise<Response> {
  return postJson(`${server.url}/v1/embeddings`, body, key);
}

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

function decode(base64: string): number[] {
  const bytes = Uint8Array.fromBase64(base64);
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
}

Deno.test("embeddings: one text through the openai client, OpenAI's shape with the gateway's model id", async () => {
  const { server, client } = await setup();
  await using _ = server;
  // The client asks for base64 by default and decodes it.
  const res = await client.embeddings.create({ model: "sim-embed", input: "hello embeddings" });
  assert.equal(res.object, "list");
  assert.equal(res.model, "sim-embed");
  assert.equal(res.data.length, 1);
  assert.deepEqual(Object.keys(res.data[0]!).sort(), ["embedding", "index", "object"]);
  assert.equal(res.data[0]!.object, "embedding");
  assert.equal(res.data[0]!.index, 0);
  assert.equal(res.data[0]!.embedding.length, 256);
  assert.ok(Math.abs(norm(res.data[0]!.embedding) - 1) < 1e-5);
  assert.ok(res.usage.prompt_tokens > 0);
  assert.equal(res.usage.total_tokens, res.usage.prompt_tokens);

  // Over raw HTTP with no encoding_format: floats, and the same floats again (deterministic).
  const raw = await post(server, { model: "sim-embed", input: "hello embeddings" });
  assert.equal(raw.status, 200);
  const body = await raw.json();
  assert.deepEqual(Object.keys(body).sort(), ["data", "model", "object", "usage"]);
  assert.deepEqual(Object.keys(body.usage).sort(), ["prompt_tokens", "total_tokens"]);
  assert.deepEqual(body.data[0].embedding, res.data[0]!.embedding);

  const record = await logRecord(server, raw.headers.get("x-request-id"));
  assert.equal(record.path, "/v1/embeddings");
  assert.equal(record.model, "sim-embed");
  assert.equal(record.status, 200);
  assert.equal(record.prompt_tokens, body.usage.prompt_tokens);
  assert.ok(!JSON.stringify(record).includes("hello embeddings"), "no content in the log");
});

Deno.test("embeddings: a batch of 100, in order; base64 decodes to the same floats as float", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const input = Array.from({ length: 100 }, (_, i) => `document number ${i} about topic ${i % 7}`);
  const floats = await client.embeddings.create({
    model: "sim-embed",
    input,
    encoding_format: "float",
  });
  assert.equal(floats.data.length, 100);
  floats.data.forEach((d, i) => assert.equal(d.index, i));
  assert.ok(floats.usage.prompt_tokens >= 100 * 5);

  const raw = await post(server, { model: "sim-embed", input, encoding_format: "base64" });
  assert.equal(raw.status, 200);
  const base64 = await raw.json();
  assert.equal(typeof base64.data[0].embedding, "string");
  base64.data.forEach((d: { index: number; embedding: string }, i: number) => {
    assert.equal(d.index, i);
    assert.deepEqual(decode(d.embedding), floats.data[i]!.embedding);
  });
  assert.deepEqual(base64.usage, floats.usage);

  // The client's own base64 path (its default) gives the same numbers.
  const decoded = await client.embeddings.create({ model: "sim-embed", input });
  assert.deepEqual(decoded.data.map((d) => d.embedding), floats.data.map((d) => d.embedding));
});

Deno.test("embeddings: dimensions up to the model's size, each vector normalised", async () => {
  const { server, client } = await setup();
  await using _ = server;
  for (const dimensions of [1, 64, 256]) {
    const res = await client.embeddings.create({
      model: "sim-embed",
      input: ["alpha beta", "gamma"],
      dimensions,
    });
    for (const d of res.data) {
      assert.equal(d.embedding.length, dimensions);
      assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-5);
    }
  }
  const small = await client.embeddings.create({ model: "sim-embed-small", input: "alpha" });
  assert.equal(small.data[0]!.embedding.length, 32);
  await expectError(await post(server, { model: "sim-embed", input: "a", dimensions: 257 }), 400, {
    type: "invalid_request_error",
    code: "invalid_value",
    param: "dimensions",
    message: /'dimensions': expected an integer from 1 to 256, but got 257/,
  });
  await expectError(await post(server, { model: "sim-embed", input: "a", dimensions: 0 }), 400, {
    param: "dimensions",
  });
  await expectError(
    await post(server, { model: "sim-embed-fixed", input: "a", dimensions: 8 }),
    400,
    { code: "unsupported_parameter", param: "dimensions", message: /sim-embed-fixed/ },
  );
});

Deno.test("embeddings: the simulator puts texts that share words closer than texts that share none", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const res = await client.embeddings.create({
    model: "sim-embed",
    input: [
      "the cat sat on the mat",
      "a cat lay on a warm mat",
      "stock prices fell sharply today",
      "The Cat sat on the mat!",
    ],
    encoding_format: "float",
  });
  const [cat, cat2, stocks, same] = res.data.map((d) => d.embedding) as [
    number[],
    number[],
    number[],
    number[],
  ];
  assert.ok(
    cosine(cat, cat2) > cosine(cat, stocks) + 0.2,
    `${cosine(cat, cat2)} vs ${cosine(cat, stocks)}`,
  );
  assert.ok(cosine(cat2, cat) > cosine(cat2, stocks));
  // Case and punctuation aside, the same words are the same vector.
  assert.ok(cosine(cat, same) > 0.9999);

  // Token ids are words too: arrays that share ids are closer.
  const ids = await client.embeddings.create({
    model: "sim-embed",
    input: [[1, 2, 3, 4], [1, 2, 3, 5], [10, 11, 12, 13]],
    encoding_format: "float",
  });
  const [a, b, c] = ids.data.map((d) => d.embedding) as [number[], number[], number[]];
  assert.ok(cosine(a, b) > cosine(a, c));
  assert.equal(ids.usage.prompt_tokens, 12);
  const single = await post(server, { model: "sim-embed", input: [7, 8, 9] });
  const singleBody = await single.json();
  assert.equal(singleBody.data.length, 1);
  assert.equal(singleBody.usage.prompt_tokens, 3);
});

Deno.test("embeddings: validation errors name the field, in OpenAI's error shape", async () => {
  const { server } = await setup();
  await using _ = server;
  const cases: [Record<string, unknown>, string, string, RegExp][] = [
    [{ input: "x" }, "model", "missing_required_parameter", /Missing required parameter: 'model'/],
    [{ model: "sim-embed" }, "input", "missing_required_parameter", /'input'/],
    [{ model: "sim-embed", input: "" }, "input", "invalid_value", /'input'/],
    [{ model: "sim-embed", input: [] }, "input", "invalid_value", /at least 1 item/],
    [{ model: "sim-embed", input: ["a", ""] }, "input[1]", "invalid_value", /'input\[1\]'/],
    [{ model: "sim-embed", input: ["a", 3] }, "input[1]", "invalid_type", /a string like/],
    [{ model: "sim-embed", input: [[1], []] }, "input[1]", "invalid_value", /at least 1 item/],
    [{ model: "sim-embed", input: [1, -2] }, "input[1]", "invalid_value", /at least 0/],
    [{ model: "sim-embed", input: 42 }, "input", "invalid_type", /an array of token ids/],
    [
      { model: "sim-embed-small", input: ["a", "b", "c", "d"] },
      "input",
      "invalid_value",
      /at most 3 inputs in a request, but got 4/,
    ],
    [
      { model: "sim-embed-small", input: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
      "input",
      "invalid_value",
      /at most 8 tokens.*but got 9 tokens/,
    ],
    [
      { model: "sim-embed-small", input: ["ok", "x".repeat(33)] },
      "input[1]",
      "invalid_value",
      /at most 8 tokens.*33 characters/,
    ],
    [
      { model: "sim-embed", input: "a", encoding_format: "hex" },
      "encoding_format",
      "invalid_value",
      /'encoding_format'.*"float" or "base64"/,
    ],
    [
      { model: "sim-embed", input: "a", dimensions: 1.5 },
      "dimensions",
      "invalid_type",
      /'dimensions'/,
    ],
    [{ model: "sim-embed", input: "a", user: 5 }, "user", "invalid_type", /'user'/],
  ];
  for (const [body, param, code, message] of cases) {
    await expectError(await post(server, body), 400, {
      type: "invalid_request_error",
      param,
      code,
      message,
    });
  }
  // The default limit is OpenAI's 2048 inputs.
  await expectError(
    await post(server, { model: "sim-embed", input: Array.from({ length: 2049 }, () => "a") }),
    400,
    { param: "input", message: /at most 2048 inputs/ },
  );
});

Deno.test("embeddings: a model without embeddings is 400 unsupported_capability; unknown and keyed models as everywhere", async () => {
  const { server } = await setup();
  await using _ = server;
  await expectError(await post(server, { model: "sim-chat", input: "hi" }), 400, {
    type: "invalid_request_error",
    code: "unsupported_capability",
    param: "model",
    message: /`sim-chat` does not serve embeddings/,
  });
  await expectError(await post(server, { model: "sim-moderation", input: "hi" }), 400, {
    code: "unsupported_capability",
  });
  await expectError(await post(server, { model: "no-such-model", input: "hi" }), 404, {
    code: "model_not_found",
  });
  await expectError(await post(server, { model: "sim-embed-keyed", input: "hi" }), 401, {});

  const { key } = await server.app.services.keys.create({ name: "t", models: ["sim-chat"] });
  await expectError(await post(server, { model: "sim-embed-keyed", input: "hi" }, key), 403, {});
  const { key: allowed } = await server.app.services.keys.create({ name: "u" });
  const client = new OpenAI({ apiKey: allowed, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const res = await client.embeddings.create({ model: "sim-embed-keyed", input: "hi" });
  assert.equal(res.model, "sim-embed-keyed");
});

Deno.test("embeddings: /v1/models shows the capability flag and the vector length", async () => {
  const { server, client } = await setup();
  await using _ = server;
  const models = (await client.models.list()).data as unknown as Record<string, unknown>[];
  const embed = models.find((m) => m.id === "sim-embed")!;
  assert.equal(embed.embeddings, true);
  assert.equal(embed.embedding_dimensions, 256);
  assert.equal(models.find((m) => m.id === "sim-embed-small")!.embedding_dimensions, 32);
  const chat = models.find((m) => m.id === "sim-chat")!;
  assert.equal(chat.embeddings, false);
  assert.ok(!("embedding_dimensions" in chat));
});

Deno.test("embeddings: requests count in the `other` rate-limit scope", async () => {
  const { server } = await setup((raw) => {
    raw.limits = {
      ...GENEROUS_LIMITS,
      anonymous: { ...GENEROUS_LIMITS.anonymous, other: { per_minute: 2, per_day: null } },
    };
  });
  await using _ = server;
  for (let i = 0; i < 2; i++) {
    const ok = await post(server, { model: "sim-embed", input: "hi" });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  }
  await expectError(await post(server, { model: "sim-embed", input: "hi" }), 429, {});
  // Chat has its own scope.
  const chat = await postJson(`${server.url}/v1/chat/completions`, {
    model: "sim-chat",
    messages: [{ role: "user", content: "hi" }],
  });
  assert.equal(chat.status, 200);
  await chat.body?.cancel();
});

Deno.test("embeddings: with content logging on, the inputs are in the log record", async () => {
  const { server } = await setup((raw) => {
    raw.logs = { include_content: true };
  });
  await using _ = server;
  const res = await post(server, { model: "sim-embed", input: ["first text", "second"] });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.deepEqual(record.content, ["first text", "second"]);
});

Deno.test("config: embeddings on a style that cannot serve them (Anthropic; Gemini can), and the settings' bounds", () => {
  const raw = (models: unknown[], providers: unknown[] = []) => ({
    providers: [{ id: "sim", style: "simulator" }, ...providers],
    models,
  });
  assert.throws(
    () =>
      parseConfig(
        raw([{ id: "e", provider: "a", embeddings: true }], [{
          id: "a",
          style: "anthropic",
          api_key_env: "K",
        }]),
        "switchyard.json",
      ),
    /models\[0\]\.embeddings: provider "a" \(style anthropic\) cannot serve embeddings/,
  );
  // Gemini serves embeddings (batchEmbedContents) since issue #35's Gemini back end.
  const gemini = parseConfig(
    raw([{ id: "e", provider: "g", embeddings: true }], [{
      id: "g",
      style: "gemini",
      api_key_env: "K",
    }]),
    "switchyard.json",
  );
  assert.equal(gemini.models[0]!.embeddings?.max_inputs, 2048);
  assert.throws(
    () =>
      parseConfig(
        raw([{ id: "e", provider: "sim", embeddings: { dimension: 8 } }]),
        "switchyard.json",
      ),
    /models\[0\]\.embeddings\.dimension: unknown parameter/,
  );
  const config = parseConfig(
    raw([{ id: "e", provider: "sim", embeddings: true }, {
      id: "o",
      provider: "oa",
      embeddings: true,
    }], [{ id: "oa", style: "openai", base_url: "http://127.0.0.1:1/v1" }]),
    "switchyard.json",
  );
  assert.deepEqual(config.models[0]!.embeddings, {
    dimensions: 256,
    custom_dimensions: true,
    max_inputs: 2048,
    max_input_tokens: 8192,
  });
  assert.equal(config.models[1]!.embeddings!.dimensions, null);
});
