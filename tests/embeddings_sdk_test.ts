/**
 * `POST /v1/embeddings` through the SDKs applications embed with, unchanged: the AI SDK's
 * `embed` / `embedMany` and LangChain's `OpenAIEmbeddings` (which ask for base64 and decode it),
 * against the simulator and an OpenAI-style upstream. Each vector must equal what the `openai`
 * client gets as floats for the same text, in order, and usage must be reported.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { createOpenAI } from "npm:@ai-sdk/openai@4.0.118";
import { embed, embedMany } from "npm:ai@7.0.173";
import { OpenAIEmbeddings } from "npm:@langchain/openai@1.6.0";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { createKey } from "./support/sdk_gateway.ts";
import { startServer, testConfig } from "./support/server.ts";

const TEXTS = Array.from(
  { length: 40 },
  (_, i) => `document ${i}: ${i % 2 ? "rivers and mountains" : "ledgers and invoices"} ${i}`,
);

/** A gateway URL and key, and the model to embed with there. */
interface Target {
  name: string;
  baseURL: string;
  apiKey: string;
  model: string;
}

/** What the `openai` client gets as floats for `texts`: the reference vectors. */
async function reference(t: Target, texts: string[]): Promise<number[][]> {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey, maxRetries: 0 });
  const res = await client.embeddings.create({
    model: t.model,
    input: texts,
    encoding_format: "float",
  });
  return res.data.map((d) => d.embedding);
}

/** Float32 closeness: the SDKs decode base64 floats, the reference is JSON numbers. */
function assertClose(actual: number[], expected: number[], label: string): void {
  assert.equal(actual.length, expected.length, label);
  for (let i = 0; i < actual.length; i++) {
    assert.ok(Math.abs(actual[i]! - expected[i]!) < 1e-6, `${label}[${i}]`);
  }
}

async function checkSdks(t: Target): Promise<void> {
  const expected = await reference(t, TEXTS);
  const provider = createOpenAI({ baseURL: t.baseURL, apiKey: t.apiKey });
  const many = await embedMany({ model: provider.embeddingModel(t.model), values: TEXTS });
  assert.equal(many.embeddings.length, TEXTS.length, t.name);
  many.embeddings.forEach((v, i) => assertClose(v, expected[i]!, `${t.name} embedMany ${i}`));
  assert.ok((many.usage?.tokens ?? 0) > 0, `${t.name}: embedMany reports usage`);
  const one = await embed({ model: provider.embeddingModel(t.model), value: TEXTS[3]! });
  assertClose(one.embedding, expected[3]!, `${t.name} embed`);

  const langchain = new OpenAIEmbeddings({
    model: t.model,
    apiKey: t.apiKey,
    configuration: { baseURL: t.baseURL },
    maxRetries: 0,
  });
  const docs = await langchain.embedDocuments(TEXTS);
  assert.equal(docs.length, TEXTS.length, t.name);
  docs.forEach((v, i) => assertClose(v, expected[i]!, `${t.name} LangChain ${i}`));
  const query = await langchain.embedQuery(TEXTS[7]!);
  assertClose(query, expected[7]!, `${t.name} LangChain query`);
}

/** A gateway with `models` (and `upstream` as the OpenAI-style provider `oa`), whose admin API
 * makes keys. */
async function gateway(models: Record<string, unknown>[], upstream?: FakeUpstream) {
  const env: Record<string, string> = { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN };
  if (upstream) env.OA_KEY = upstream.apiKey;
  return await startServer({
    env: (name) => env[name],
    config: testConfig((raw) => {
      raw.limits = GENEROUS_LIMITS;
      (raw.models as unknown[]).push(...models);
      if (upstream) {
        (raw.providers as unknown[]).push({
          id: "oa",
          style: "openai",
          base_url: `${upstream.url}/v1`,
          api_key_env: "OA_KEY",
        });
      }
    }),
  });
}

Deno.test("embeddings SDKs: AI SDK embed/embedMany and LangChain OpenAIEmbeddings on the simulator", async () => {
  await using server = await gateway([{ id: "sim-embed", provider: "sim", embeddings: true }]);
  await checkSdks({
    name: "simulator",
    baseURL: `${server.url}/v1`,
    apiKey: await createKey(server),
    model: "sim-embed",
  });
});

Deno.test("embeddings SDKs: AI SDK embed/embedMany and LangChain OpenAIEmbeddings through an OpenAI-style upstream", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway([{
    id: "oa-embed",
    provider: "oa",
    upstream_model: "text-embedding-3-small",
    embeddings: true,
  }], upstream);
  await checkSdks({
    name: "openai-style",
    baseURL: `${server.url}/v1`,
    apiKey: await createKey(server),
    model: "oa-embed",
  });
  assert.deepEqual(upstream.violations, []);
  const formats = new Set(
    upstream.received.map((r) => String((r.body as Record<string, unknown>).encoding_format)),
  );
  assert.ok(formats.has("base64"), "an SDK asked for base64 and it was passed on as such");
});
