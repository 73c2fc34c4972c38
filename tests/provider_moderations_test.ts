/**
 * `POST /v1/moderations` end to end through a real gateway port, with the `openai` client,
 * against the fake OpenAI upstream: native moderation through `/v1/moderations` (omni and
 * text models, thresholds, image pairing), guard-prompt moderation through its chat endpoint,
 * the upstream fault table and a client disconnect.
 */
import assert from "node:assert/strict";
import { MODERATION_CATEGORIES } from "../src/config/types.ts";
import { GUARD_PROMPT } from "../src/moderation/guard.ts";
import { openaiClient } from "./support/client.ts";
import { assertDisconnectAborts, assertFaultMapping } from "./support/fault_mapping.ts";
import { pngUrl } from "./support/image_fixtures.ts";
import { startGateway } from "./support/gateway.ts";
import { postJson } from "./support/http.ts";

const MODELS = [
  {
    id: "oa-omni",
    provider: "oa",
    upstream_model: "omni-moderation-latest",
    moderation: true,
    image_input: true,
  },
  {
    id: "oa-omni-strict",
    provider: "oa",
    upstream_model: "omni-moderation-latest",
    moderation: true,
    moderation_thresholds: { harassment: 0.9, "self-harm": 0.00001 },
  },
  { id: "oa-text-mod", provider: "oa", upstream_model: "text-moderation-stable", moderation: true },
  {
    id: "oa-guard",
    provider: "oa",
    upstream_model: "gpt-up",
    moderation: true,
    image_input: true,
    moderation_mode: "guard",
  },
];

interface Result {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
}

const flagged = (r: Result) =>
  Object.entries(r.categories).filter(([, v]) => v).map(([k]) => k).sort();

function assertShape(result: Result): void {
  assert.deepEqual(Object.keys(result).sort(), ["categories", "category_scores", "flagged"]);
  assert.deepEqual(Object.keys(result.categories), [...MODERATION_CATEGORIES]);
  assert.deepEqual(Object.keys(result.category_scores), [...MODERATION_CATEGORIES]);
  assert.equal(result.flagged, Object.values(result.categories).some((v) => v));
}

Deno.test("moderations through an OpenAI-style upstream: one batched call, the 11 categories, the gateway's id and model", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const input = ["I will kill you", "how to shoplift", "have a lovely day", "what an idiot"];
  const res = await client.moderations.create({ model: "oa-omni", input });
  const fake = gateway.openai;
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 1);
  assert.equal(fake.last.path, "/v1/moderations");
  assert.deepEqual(fake.last.body, { model: "omni-moderation-latest", input });
  assert.equal(res.model, "oa-omni");
  assert.match(res.id, /^modr-[0-9a-f]{32}$/);
  assert.notEqual(res.id, "modr-00000000000000000000000000000001"); // the upstream's id
  const results = res.results as unknown as Result[];
  results.forEach(assertShape);
  assert.deepEqual(results.map(flagged), [
    ["harassment", "harassment/threatening", "violence"],
    [], // the upstream flagged `illicit`, which is not one of the 11
    [],
    ["harassment"],
  ]);
  assert.equal(results[0]!.category_scores.violence, 0.93);
  assert.equal(results[2]!.category_scores.hate, 0.000012);
  assert.ok(!("illicit" in results[1]!.category_scores));
  assert.ok(!("category_applied_input_types" in results[0]!));
});

Deno.test("moderations through an OpenAI-style upstream: the model's thresholds decide; missing categories are filled", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const strict =
    (await client.moderations.create({ model: "oa-omni-strict", input: "I will kill you" }))
      .results[0] as unknown as Result;
  // harassment 0.71 stays under its 0.9; self-harm's tiny score reaches its 0.00001; the
  // categories without a threshold keep the upstream's own flags.
  assert.deepEqual(flagged(strict), ["harassment/threatening", "self-harm", "violence"]);
  assert.equal(strict.category_scores.harassment, 0.71);

  const legacy =
    (await client.moderations.create({ model: "oa-text-mod", input: "I will kill you" }))
      .results[0] as unknown as Result;
  assertShape(legacy);
  assert.deepEqual(flagged(legacy), ["violence"]);
  assert.equal(legacy.category_scores.harassment, 0);
  assert.equal(legacy.category_scores["harassment/threatening"], 0);
  assert.equal((gateway.openai.last.body as { model: string }).model, "text-moderation-stable");
});

Deno.test("moderations through an OpenAI-style upstream: images go with their texts, one per upstream call", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const fake = gateway.openai;
  const plain = await pngUrl(null);
  const bloody = await pngUrl("blood on the floor");
  const res = await postJson(`${gateway.server.url}/v1/moderations`, {
    model: "oa-omni",
    input: ["first caption", "second caption", "third caption"],
    input_images: [plain, plain, plain, bloody],
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 4);
  const sent = fake.received.map((r) => r.body as { input: Record<string, unknown>[] });
  for (const s of sent) {
    assert.equal(s.input.length, 2);
    assert.equal(s.input[0]!.type, "text");
    assert.equal(s.input[1]!.type, "image_url");
  }
  const third = sent.filter((s) => s.input[0]!.text === "third caption");
  assert.deepEqual(
    third.map((s) => (s.input[1]!.image_url as { url: string }).url).sort(),
    [plain, bloody].sort(),
  );
  assert.deepEqual((body.results as Result[]).map(flagged), [
    [],
    [],
    ["violence", "violence/graphic"],
  ]);

  // OpenAI's own multi-modal form from the client is one input, sent as such.
  const client = openaiClient(gateway.server);
  const parts = await client.moderations.create({
    model: "oa-omni",
    input: [
      { type: "text", text: "look at this" },
      { type: "image_url", image_url: { url: bloody } },
    ],
  });
  assert.equal(parts.results.length, 1);
  assert.deepEqual(fake.last.body, {
    model: "omni-moderation-latest",
    input: [
      { type: "text", text: "look at this" },
      { type: "image_url", image_url: { url: bloody } },
    ],
  });
  assert.deepEqual(flagged(parts.results[0] as unknown as Result), [
    "violence",
    "violence/graphic",
  ]);
});

Deno.test("moderations through a chat model on an OpenAI-style upstream, with the guard prompt", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const fake = gateway.openai;
  fake.script = (conversation) => {
    const text = conversation.turns.at(-1)!.texts.join(" ");
    const images = conversation.turns.at(-1)!.images.length;
    return {
      text: text.includes("dawn") || images > 0
        ? '{"violence": 0.8, "harassment/threatening": 0.6}'
        : '{"violence": 0.01}',
      toolCalls: [],
    };
  };
  const client = openaiClient(gateway.server);
  const res = await client.moderations.create({
    model: "oa-guard",
    input: ["we attack at dawn", "nice weather"],
  });
  assert.equal(res.model, "oa-guard");
  const results = res.results as unknown as Result[];
  results.forEach(assertShape);
  assert.deepEqual(results.map(flagged), [
    ["harassment", "harassment/threatening", "violence"],
    [],
  ]);
  assert.equal(results[0]!.category_scores.harassment, 0.6); // lifted by its subcategory
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 2);
  for (const r of fake.received) {
    assert.equal(r.path, "/v1/chat/completions");
    const body = r.body as { model: string; messages: { role: string; content: unknown }[] };
    assert.equal(body.model, "gpt-up");
    assert.deepEqual(body.messages[0], { role: "system", content: GUARD_PROMPT });
  }
});

const MODERATION_ENDPOINT = {
  path: "/v1/moderations",
  upstreamPath: "/v1/moderations",
  body: { model: "oa-omni", input: ["hello", "I will kill you"] },
  models: MODELS,
};

Deno.test("moderations through an OpenAI-style upstream: 429 → 429, 500 → 502 after retries, 401 → 502 without the key, no answer → 504", async () => {
  await assertFaultMapping(MODERATION_ENDPOINT);
});

Deno.test("moderations through an OpenAI-style upstream: a client that disconnects closes the upstream call", async () => {
  await assertDisconnectAborts({
    ...MODERATION_ENDPOINT,
    body: { model: "oa-omni", input: "look", input_images: [await pngUrl("some text")] },
  });
});
