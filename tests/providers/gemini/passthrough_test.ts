/**
 * The Gemini adapter's passthrough against the fake Gemini upstream: the body as the client
 * wrote it (tool schemas cut to Gemini's subset), the model in the path, `modelVersion`
 * written back; a stream's chunks in the client's framing (SSE as Gemini writes it, or one
 * JSON array), their usage read; `countTokens` on the upstream's model.
 */
import assert from "node:assert/strict";
import { GeminiProvider } from "../../../src/providers/gemini/provider.ts";
import type { PassedBatch, PassthroughCall } from "../../../src/providers/types.ts";
import { startFakeGemini } from "../../support/fake_gemini.ts";
import { callContext, modelRecord, providerDeps } from "../../support/provider_call.ts";

const BODY = {
  contents: [{ role: "user", parts: [{ text: "Hello there" }] }],
  tools: [{
    functionDeclarations: [{
      name: "f",
      parametersJsonSchema: { $schema: "x", type: "object", properties: {} },
    }],
  }],
  safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
};

function call(endpoint: PassthroughCall["endpoint"], framing?: "sse" | "json_array") {
  const sent: PassthroughCall = {
    protocol: "gemini_generate",
    endpoint,
    body: structuredClone(BODY),
    headers: {},
    shown: { modelVersion: "gw-model" },
  };
  if (framing) sent.framing = framing;
  return sent;
}

async function text(batches: AsyncIterable<PassedBatch>) {
  const decoder = new TextDecoder();
  let out = "";
  let usage = null;
  for await (const batch of batches) {
    out += decoder.decode(batch.bytes);
    if (batch.usage) usage = batch.usage;
  }
  return { out, usage };
}

Deno.test("gemini passthrough: generateContent as written, modelVersion the gateway's", async () => {
  await using fake = startFakeGemini();
  const provider = new GeminiProvider(providerDeps("gemini", fake.url, fake.apiKey));
  const ctx = callContext(modelRecord({ upstream_model: "gemini-up" }));
  const answer = await provider.passthrough(call("generateContent"), ctx);
  assert.equal(answer.kind, "json");
  if (answer.kind !== "json") return;
  assert.equal(answer.body.modelVersion, "gw-model");
  assert.ok(answer.usage!.input > 0);
  const received = fake.received.at(-1)!;
  assert.equal(received.path, "/v1beta/models/gemini-up:generateContent");
  assert.deepEqual(received.body, {
    ...BODY,
    tools: [{
      functionDeclarations: [{
        name: "f",
        parametersJsonSchema: { type: "object", properties: {} },
      }],
    }],
  });
  assert.deepEqual(fake.violations, []);
});

Deno.test("gemini passthrough: a stream in Gemini's SSE frames, or one JSON array", async () => {
  await using fake = startFakeGemini({ sliceBytes: 5 });
  const provider = new GeminiProvider(providerDeps("gemini", fake.url, fake.apiKey));
  const ctx = callContext(modelRecord({ upstream_model: "gemini-up" }));
  const sse = await provider.passthrough(call("streamGenerateContent", "sse"), ctx);
  assert.equal(sse.kind, "stream");
  if (sse.kind !== "stream") return;
  const frames = await text(sse.batches);
  assert.ok(frames.out.startsWith("data: {") && frames.out.endsWith("}\r\n\r\n"));
  for (const frame of frames.out.split("\r\n\r\n").slice(0, -1)) {
    assert.equal(JSON.parse(frame.slice(6)).modelVersion, "gw-model");
  }
  assert.ok(frames.usage!.output > 0);
  const array = await provider.passthrough(call("streamGenerateContent", "json_array"), ctx);
  if (array.kind !== "stream") throw new Error("not a stream");
  const chunks = JSON.parse((await text(array.batches)).out);
  assert.ok(Array.isArray(chunks) && chunks.length >= 2);
  assert.equal(chunks.at(-1).candidates[0].finishReason, "STOP");
  assert.equal(fake.received.at(-1)!.path, "/v1beta/models/gemini-up:streamGenerateContent");
});

Deno.test("gemini passthrough: countTokens asks the upstream's model", async () => {
  await using fake = startFakeGemini();
  const provider = new GeminiProvider(providerDeps("gemini", fake.url, fake.apiKey));
  const ctx = callContext(modelRecord({ upstream_model: "gemini-up" }));
  const sent = call("countTokens");
  sent.body = { contents: BODY.contents };
  const answer = await provider.passthrough(sent, ctx);
  assert.equal(answer.kind, "json");
  if (answer.kind === "json") assert.ok((answer.body.totalTokens as number) > 0);
  assert.equal(fake.received.at(-1)!.path, "/v1beta/models/gemini-up:countTokens");
});
