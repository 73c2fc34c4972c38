/**
 * The OpenAI-style moderation adapter: how a request becomes upstream calls (batched texts,
 * one multi-modal call per image), how answers are read (13 categories cut to 11, missing ones
 * filled, counts checked) and merged, against pure fixtures and the fake OpenAI upstream.
 */
import assert from "node:assert/strict";
import { MODERATION_CATEGORIES } from "../../../src/config/types.ts";
import { ApiError } from "../../../src/errors.ts";
import {
  mergeVerdicts,
  moderationCalls,
  readModerationAnswer,
} from "../../../src/providers/openai/moderation.ts";
import type { ModerationRequest } from "../../../src/types/openai.ts";
import { OMNI_CATEGORIES } from "../../support/fake_openai_moderation.ts";
import { pngUrl } from "../../support/image_fixtures.ts";
import { callContext, modelRecord } from "../../support/provider_call.ts";
import { STYLES } from "../../support/provider_styles.ts";
import { gatewayError } from "../../support/rejection.ts";
import { waitFor } from "../../support/wait.ts";

const openai = STYLES.find((s) => s.name === "openai")!;

function request(input: string[], images: string[] = []): ModerationRequest {
  return { model: "gw-mod", input, input_images: images };
}

function moderationContext(upstream: string) {
  return callContext(
    modelRecord({
      id: "gw-mod",
      upstream_model: upstream,
      chat_completions: false,
      moderation: true,
    }),
  );
}

const flagged = (r: { categories: Record<string, boolean> }) =>
  Object.entries(r.categories).filter(([, v]) => v).map(([k]) => k).sort();

/** An OpenAI omni result with every one of its 13 categories at `score`, `overrides` on top. */
function omniResult(overrides: Record<string, number> = {}, score = 0.001) {
  const scores = Object.fromEntries(OMNI_CATEGORIES.map((c) => [c, overrides[c] ?? score]));
  return {
    flagged: true,
    categories: Object.fromEntries(OMNI_CATEGORIES.map((c) => [c, scores[c]! >= 0.5])),
    category_scores: scores,
    category_applied_input_types: Object.fromEntries(OMNI_CATEGORIES.map((c) => [c, ["text"]])),
  };
}

Deno.test("moderationCalls: texts without images go in one batch; each image with its text in a call of its own", () => {
  assert.deepEqual(moderationCalls(request(["a", "b", "c"]), "omni-up"), [
    { body: { model: "omni-up", input: ["a", "b", "c"] }, texts: [0, 1, 2] },
  ]);
  const x = "data:image/png;base64,eA==", y = "data:image/png;base64,eQ==";
  const z = "data:image/png;base64,eg==";
  // Pairing: x with "a", y and z (beyond the last text) with "c"; "b" alone in the batch.
  const calls = moderationCalls(request(["a", "b"], [x, y, z]), "omni-up");
  const part = (url: string) => ({ type: "image_url", image_url: { url } });
  assert.deepEqual(calls, [
    { body: { model: "omni-up", input: [{ type: "text", text: "a" }, part(x)] }, texts: [0] },
    { body: { model: "omni-up", input: [{ type: "text", text: "b" }, part(y)] }, texts: [1] },
    { body: { model: "omni-up", input: [{ type: "text", text: "b" }, part(z)] }, texts: [1] },
  ]);
  const mixed = moderationCalls(request(["a", "b", ""], [x, x, y]), "omni-up");
  assert.deepEqual(mixed.map((c) => c.texts), [[0], [1], [2]]);
  // An empty text is not sent as a part: the image alone is the input.
  assert.deepEqual(mixed[2]!.body.input, [part(y)]);
  const some = moderationCalls(request(["a", "b", "c"], [x]), "omni-up");
  assert.deepEqual(some.map((c) => c.texts), [[1, 2], [0]]);
  assert.deepEqual(some[0]!.body.input, ["b", "c"]);
});

Deno.test("readModerationAnswer: OpenAI's 13 categories become the spec's 11, in order; missing ones are false/0", () => {
  const [omni] = readModerationAnswer(
    { results: [omniResult({ illicit: 0.97, "illicit/violent": 0.8, violence: 0.6 })] },
    1,
  );
  assert.deepEqual(Object.keys(omni!.categories), [...MODERATION_CATEGORIES]);
  assert.deepEqual(Object.keys(omni!.category_scores), [...MODERATION_CATEGORIES]);
  assert.equal(omni!.category_scores.violence, 0.6);
  assert.equal(omni!.categories.violence, true);
  assert.ok(!("illicit" in omni!.categories) && !("illicit/violent" in omni!.category_scores));

  const [legacy] = readModerationAnswer({
    results: [{
      flagged: true,
      categories: { hate: false, violence: true, "violence/graphic": false },
      category_scores: { hate: 0.01, violence: 0.9, "violence/graphic": 0.2 },
    }],
  }, 1);
  assert.deepEqual(Object.keys(legacy!.category_scores), [...MODERATION_CATEGORIES]);
  assert.equal(legacy!.category_scores.harassment, 0);
  assert.equal(legacy!.categories.harassment, false);
  assert.equal(legacy!.categories.violence, true);
});

Deno.test("readModerationAnswer: a wrong count or a malformed body is a 502", () => {
  const cases: [unknown, number, RegExp][] = [
    [{ results: [omniResult()] }, 2, /returned 1 results for 2 inputs/],
    [{ results: [omniResult(), omniResult()] }, 1, /returned 2 results for 1 inputs/],
    [{ id: "modr-1" }, 1, /no results array/],
    [[omniResult()], 1, /no results array/],
    [{ results: [{ flagged: true, categories: {} }] }, 1, /results\[0\] has no category_scores/],
    [{ results: [omniResult(), "x"] }, 2, /results\[1\] has no category_scores/],
    [{ results: [{ ...omniResult(), categories: [] }] }, 1, /categories is not an object/],
  ];
  for (const [body, expected, message] of cases) {
    assert.throws(
      () => readModerationAnswer(body, expected),
      (e: unknown) => e instanceof ApiError && e.status === 502 && message.test(e.message),
      JSON.stringify(body),
    );
  }
});

Deno.test("mergeVerdicts: the higher score and either flag, per category", () => {
  const [a] = readModerationAnswer({ results: [omniResult({ violence: 0.7, sexual: 0.1 })] }, 1);
  const [b] = readModerationAnswer({ results: [omniResult({ violence: 0.2, sexual: 0.6 })] }, 1);
  const merged = mergeVerdicts(a!, b!);
  assert.equal(merged.category_scores.violence, 0.7);
  assert.equal(merged.category_scores.sexual, 0.6);
  assert.deepEqual(flagged(merged), ["sexual", "violence"]);
  assert.equal(a!.category_scores.sexual, 0.1, "the inputs are not changed");
});

Deno.test("openai adapter moderation: a batch is one call; results in order with the 11 keys", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const texts = ["Have a nice day", "I will kill you", "how to shoplift a watch", "you idiot"];
  const results = await provider.moderate!(
    request(texts),
    moderationContext("omni-moderation-latest"),
  );
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 1);
  assert.equal(fake.last.path, "/v1/moderations");
  assert.deepEqual(fake.last.body, { model: "omni-moderation-latest", input: texts });
  for (const r of results) {
    assert.deepEqual(Object.keys(r.categories), [...MODERATION_CATEGORIES]);
    assert.deepEqual(Object.keys(r.category_scores), [...MODERATION_CATEGORIES]);
    assert.equal(r.flagged, Object.values(r.categories).some((v) => v));
  }
  assert.deepEqual(results.map(flagged), [
    [],
    ["harassment", "harassment/threatening", "violence"],
    [], // only `illicit`, which is not one of the 11
    ["harassment"],
  ]);
  assert.equal(results[1]!.category_scores.violence, 0.93);
  assert.equal(results[0]!.category_scores.violence, 0.000012);
});

Deno.test("openai adapter moderation: each image goes with its text, one image per call, merged per text", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const plain = await pngUrl(null);
  const bloody = await pngUrl("blood everywhere");
  const threat = await pngUrl("I will kill you");
  const results = await provider.moderate!(
    request(["what is this?", "and this?", "hello"], [plain, bloody, plain, threat]),
    moderationContext("omni-moderation-latest"),
  );
  assert.deepEqual(fake.violations, []);
  // "what is this?"+plain, "and this?"+bloody, "hello"+plain, "hello"+threat.
  assert.equal(fake.received.length, 4);
  const bodies = fake.received.map((r) => r.body as { input: { text?: string }[] });
  assert.deepEqual(
    bodies.map((b) => b.input[0]!.text).sort(),
    ["and this?", "hello", "hello", "what is this?"],
  );
  for (const body of bodies) assert.equal(body.input.length, 2);
  assert.deepEqual(results.map(flagged), [
    [],
    ["violence", "violence/graphic"],
    // From the image only the image categories count: violence, not harassment.
    ["violence"],
  ]);
});

Deno.test("openai adapter moderation: a model answering in the old 7 categories gets the rest filled", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const [result] = await provider.moderate!(
    request(["I will kill you"]),
    moderationContext("text-moderation-stable"),
  );
  assert.deepEqual(Object.keys(result!.category_scores), [...MODERATION_CATEGORIES]);
  assert.deepEqual(flagged(result!), ["violence"]);
  assert.equal(result!.category_scores.harassment, 0);
  assert.equal(result!.category_scores["self-harm/intent"], 0);
});

Deno.test("openai adapter moderation: a result count that does not match, or garbage, is a 502", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const ctx = () => moderationContext("omni-moderation-latest");
  const body = (n: number) =>
    JSON.stringify({ id: "modr-x", model: "omni", results: Array(n).fill(omniResult()) });
  fake.faults = [{ garbage: body(1) }, { garbage: body(3) }, { garbage: '{"results": {}}' }];
  for (const message of [/1 results for 2 inputs/, /3 results for 2 inputs/, /malformed/]) {
    const error = await gatewayError(() => provider.moderate!(request(["a", "b"]), ctx()));
    assert.equal(error.status, 502);
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, message);
  }
});

Deno.test("openai adapter moderation: an upstream 400 (too many images) stays a 400 with its message", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey);
  fake.faults = [{
    status: 400,
    errorType: "invalid_request_error",
    errorCode: "too_many_images",
    message: "Number of images (2) exceeds maximum of 1",
  }];
  const error = await gatewayError(() =>
    provider.moderate!(request(["a"]), moderationContext("omni-moderation-latest"))
  );
  assert.equal(error.status, 400);
  assert.equal(error.message, "Number of images (2) exceeds maximum of 1");
});

Deno.test("openai adapter moderation: one failing call aborts the others of the request", async () => {
  await using fake = openai.start();
  const { provider } = openai.make(fake.url, fake.apiKey, { max_retries: 0 });
  const image = await pngUrl(null);
  // Four calls at once: "d" in a batch, and one per text with an image. The first to arrive
  // fails once the others have arrived; they would answer 200 after 300 ms, but their caller
  // has gone by then (the fake only notices when it answers: see Fault.delayMs).
  const slow = { delayMs: 300 };
  fake.faults = [{ status: 503, delayMs: 100 }, slow, slow, slow];
  const error = await gatewayError(() =>
    provider.moderate!(
      request(["a", "b", "c", "d"], [image, image, image]),
      moderationContext("omni-moderation-latest"),
    )
  );
  assert.equal(error.status, 502);
  assert.match(error.message, /HTTP 503/);
  assert.equal(fake.received.length, 4);
  await waitFor(() => fake.received.every((r, i) => i === 0 || r.wentAway), "three calls gone");
  assert.equal(fake.received[0]!.wentAway, false);
});
