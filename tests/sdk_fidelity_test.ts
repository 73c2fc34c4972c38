/**
 * Nothing lost in translation, end to end through the gateway's chat completions front door,
 * with the official `openai` client and raw HTTP: what the client asks for reaches the
 * upstream in that upstream's terms, and what the upstream answers reaches the client in
 * OpenAI's terms (LiteLLM's conventions where OpenAI has none: `reasoning_content`,
 * `thinking_blocks`, `cache_control`).
 *
 * The upstreams are the byte-exact fakes, told to reason, refuse, sign their thinking, cache
 * prompts (`flavour`, `turns`). Each assertion is on what the fake recorded and on what the
 * client got, streamed and not, compared with what the fake answers when asked directly.
 *
 * The last part checks the front door's own answers: `GET /v1/models/{id}`, and the error
 * bodies of chat, moderations and images.
 */
import assert from "node:assert/strict";
import { z } from "npm:zod@4.6.7";
import { zodResponseFormat } from "npm:openai@7.55.0/helpers/zod";
import { NotFoundError } from "npm:openai@7.55.0";
import type { ChatCompletionCreateParamsNonStreaming } from "npm:openai@7.55.0/resources/chat/completions";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";
import {
  askDirectly,
  assembleMessage,
  chunksOf,
  deadline,
  deltasOf,
  droppedParams,
  finishOf,
  joined,
  type JsonBody,
  openaiClient,
  post,
  postChat,
  type SdkGateway,
  startSdkGateway,
  streamChat,
} from "./support/sdk_gateway.ts";

type Obj = Record<string, JsonBody>;

function body(fake: FakeUpstream): Obj {
  return fake.last.body as Obj;
}

const HELLO = [{ role: "user" as const, content: "Hello there" }];

// ---------------------------------------------------------------------------------------------
// Through an OpenAI-style upstream (the fake, with its `flavour`: reasoning, refusal, cache)

Deno.test("fidelity/openai: reasoning_effort, seed, service_tier, logprobs and metadata reach the upstream", async () => {
  await using gateway = await startSdkGateway();
  const client = openaiClient(gateway);
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: "oa-chat",
    messages: HELLO,
    reasoning_effort: "low",
    seed: 42,
    service_tier: "flex",
    logprobs: true,
    top_logprobs: 2,
    metadata: { team: "qa", run: "7" },
  };
  const expected = {
    reasoning_effort: "low",
    seed: 42,
    service_tier: "flex",
    logprobs: true,
    top_logprobs: 2,
    metadata: { team: "qa", run: "7" },
  };
  await client.chat.completions.create(params);
  const sent = body(gateway.openai);
  assert.equal(sent.model, "gpt-up");
  for (const [key, value] of Object.entries(expected)) {
    assert.deepEqual(sent[key], value, `${key} reaches the upstream`);
  }
  const stream = await client.chat.completions.create({ ...params, stream: true });
  for await (const _ of stream) { /* drain */ }
  const streamed = body(gateway.openai);
  for (const [key, value] of Object.entries(expected)) {
    assert.deepEqual(streamed[key], value, `${key} reaches the upstream (stream)`);
  }
  assert.deepEqual(gateway.openai.violations, []);
});

const LONG_PROMPT = [{
  role: "user" as const,
  content: "Please read this long question carefully and answer it in a few friendly words.",
}];

Deno.test("fidelity/openai: system_fingerprint, service_tier, logprobs and usage details come back", async () => {
  await using gateway = await startSdkGateway();
  gateway.openai.flavour = { reasoning: "Thinking about a short answer first.", cachedTokens: 8 };
  const client = openaiClient(gateway);
  const params = {
    model: "oa-chat",
    messages: LONG_PROMPT,
    logprobs: true,
    top_logprobs: 2,
    service_tier: "flex" as const,
  };
  const completion = await client.chat.completions.create(params);
  const upstream = await askDirectly(gateway.openai);
  assert.equal(upstream.system_fingerprint, "fp_fake0001");
  assert.equal(upstream.service_tier, "flex");
  assert.ok(upstream.choices[0].logprobs?.content?.length > 0, "the fake gave logprobs");
  assert.ok(upstream.usage.prompt_tokens_details.cached_tokens > 0, "and cached tokens");
  assert.ok(upstream.usage.completion_tokens_details.reasoning_tokens > 0, "and reasoning tokens");
  // Every difference is collected, so that one run shows all that is lost.
  const lost: string[] = [];
  const same = (what: string, got: unknown, want: unknown) => {
    try {
      assert.deepEqual(got, want);
    } catch {
      lost.push(
        `${what}: got ${JSON.stringify(got)?.slice(0, 200)}, upstream said ${
          JSON.stringify(want)?.slice(0, 200)
        }`,
      );
    }
  };
  same("system_fingerprint", completion.system_fingerprint, upstream.system_fingerprint);
  same("service_tier", completion.service_tier, upstream.service_tier);
  same("logprobs", completion.choices[0]!.logprobs, upstream.choices[0].logprobs);
  sameUsage("usage", completion.usage, upstream.usage, same);

  const stream = await client.chat.completions.create({
    ...params,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const direct = chunksOf(await askDirectly(gateway.openai));
  same("stream system_fingerprint", chunks[0]!.system_fingerprint, direct[0].system_fingerprint);
  same("stream service_tier", chunks[0]!.service_tier, direct[0].service_tier);
  const logprobs = (cs: JsonBody[]) =>
    cs.flatMap((c: JsonBody) => c.choices[0]?.logprobs?.content ?? []);
  assert.ok(logprobs(direct).length > 0);
  same("stream logprobs", logprobs(chunks), logprobs(direct));
  // And each on the chunk of its text, as the upstream sent them (not all with the finish).
  const perChunk = (cs: JsonBody[]) =>
    cs.filter((c: JsonBody) => c.choices[0]?.delta?.content).map((c: JsonBody) => [
      c.choices[0].delta.content,
      (c.choices[0].logprobs?.content ?? []).map((l: JsonBody) => l.token).join(""),
    ]);
  assert.ok(perChunk(direct).length > 1);
  same("stream logprobs per chunk", perChunk(chunks), perChunk(direct));
  const last = chunks.at(-1)!;
  same("the usage chunk's choices", last.choices, []);
  sameUsage("stream usage", last.usage, direct.at(-1).usage, same);
  assert.deepEqual(lost, [], "what the upstream answered comes back");
  assert.deepEqual(gateway.openai.violations, []);
});

/** Compares the client's usage with the upstream's: counts, cached and reasoning tokens. */
function sameUsage(
  what: string,
  got: JsonBody,
  upstream: JsonBody,
  same: (what: string, got: unknown, want: unknown) => void,
): void {
  for (const key of ["prompt_tokens", "completion_tokens", "total_tokens"]) {
    same(`${what}.${key}`, got?.[key], upstream[key]);
  }
  same(
    `${what}.prompt_tokens_details.cached_tokens`,
    got?.prompt_tokens_details?.cached_tokens,
    upstream.prompt_tokens_details.cached_tokens,
  );
  same(
    `${what}.completion_tokens_details.reasoning_tokens`,
    got?.completion_tokens_details?.reasoning_tokens,
    upstream.completion_tokens_details.reasoning_tokens,
  );
}

Deno.test("fidelity/openai: a refusal comes back as message.refusal and delta.refusal", async () => {
  const refusal = "I'm sorry, I can't help with that request.";
  await using gateway = await startSdkGateway();
  gateway.openai.flavour = { refusal };
  const client = openaiClient(gateway);
  const completion = await client.chat.completions.create({ model: "oa-chat", messages: HELLO });
  const message = completion.choices[0]!.message;
  assert.equal(message.refusal, refusal);
  assert.equal(message.content, null);
  assert.equal(completion.choices[0]!.finish_reason, "stop");

  const { events } = await streamChat(gateway, { model: "oa-chat", messages: HELLO });
  const chunks = chunksOf(events);
  assert.equal(joined(deltasOf(chunks), "refusal"), refusal);
  assert.equal(joined(deltasOf(chunks), "content"), "");
  assert.equal(finishOf(chunks), "stop");

  // The SDK's structured-output helper sees the refusal instead of parsing content.
  const parsed = await client.chat.completions.parse({
    model: "oa-chat",
    messages: [{ role: "user", content: "Greet me in JSON." }],
    response_format: zodResponseFormat(z.object({ greeting: z.string() }), "greeting"),
  });
  assert.equal(parsed.choices[0]!.message.refusal, refusal);
  assert.equal(parsed.choices[0]!.message.parsed, null);
  assert.deepEqual(gateway.openai.violations, []);
});

Deno.test("fidelity/openai: streamed logprobs come, raw, on the chunk of their text or refusal, as the upstream sent them", async () => {
  // Small slices: chunks split across reads, as on a slow network.
  await using gateway = await startSdkGateway({ sliceBytes: 7 });
  const ask = { model: "oa-chat", messages: HELLO, logprobs: true, top_logprobs: 2 };
  /** The chunks of a stream that carry a piece of text or refusal: the piece and its logprobs
   * (every chunk's, the finish's included, is compared apart). */
  const pieces = (chunks: JsonBody[]) =>
    chunks.filter((c) => c.choices[0]?.delta?.content || c.choices[0]?.delta?.refusal).map((
      c,
    ) => [c.choices[0].delta.content ?? c.choices[0].delta.refusal, c.choices[0].logprobs]);
  for (const flavour of [{}, { refusal: "I can't help with that." }]) {
    gateway.openai.flavour = flavour;
    const { events } = await streamChat(gateway, ask);
    const chunks = chunksOf(events);
    const direct = chunksOf(await askDirectly(gateway.openai));
    const what = flavour.refusal === undefined ? "text" : "refusal";
    assert.ok(pieces(direct).length > 1, `${what}: the fake streamed pieces`);
    assert.ok(
      pieces(direct).every(([, lp]) => lp?.[what === "text" ? "content" : "refusal"]?.length > 0),
      `${what}: each with its logprobs`,
    );
    assert.deepEqual(pieces(chunks), pieces(direct), `${what}: each piece with its own`);
    const rest = chunks.filter((c) => !pieces([c]).length && c.choices.length > 0);
    assert.deepEqual(rest.map((c) => c.choices[0].logprobs), rest.map(() => null), what);
  }
  assert.deepEqual(gateway.openai.violations, []);
});

for (const field of ["reasoning_content", "reasoning"] as const) {
  Deno.test(`fidelity/openai: reasoning sent as ${field} comes back as reasoning_content`, async () => {
    const reasoning = "The user greets me. A short, friendly greeting fits.";
    await using gateway = await startSdkGateway();
    gateway.openai.flavour = { reasoning, reasoningField: field };
    const client = openaiClient(gateway);
    const completion = await client.chat.completions.create({ model: "oa-chat", messages: HELLO });
    const message = completion.choices[0]!.message as unknown as Obj;
    assert.equal(message.reasoning_content, reasoning);
    assert.match(message.content, /Hello there/);

    const { events } = await streamChat(gateway, { model: "oa-chat", messages: HELLO });
    const deltas = deltasOf(chunksOf(events));
    assert.equal(joined(deltas, "reasoning_content"), reasoning);
    assert.equal(joined(deltas, "content"), message.content);
    const firstContent = deltas.findIndex((d) => typeof d.content === "string" && d.content !== "");
    const lastReasoning = deltas.findLastIndex((d) => typeof d.reasoning_content === "string");
    assert.ok(lastReasoning < firstContent, "reasoning streams before the answer");
    assert.deepEqual(gateway.openai.violations, []);
  });
}

// ---------------------------------------------------------------------------------------------
// Through an Anthropic upstream (the fake: signed thinking, prompt cache, refusals via `turns`)

const THINK = { model: "an-chat", messages: HELLO, reasoning_effort: "low" };

Deno.test("fidelity/anthropic: reasoning_effort low becomes a thinking budget", async () => {
  await using gateway = await startSdkGateway();
  for (const stream of [false, true]) {
    const res = stream ? await streamChat(gateway, THINK) : await postChat(gateway, THINK);
    assert.equal(res.status, 200, JSON.stringify(res));
    const sent = body(gateway.anthropic);
    assert.deepEqual(Object.keys(sent.thinking ?? {}).sort(), ["budget_tokens", "type"]);
    assert.equal(sent.thinking.type, "enabled", `thinking: ${JSON.stringify(sent.thinking)}`);
    const budget = sent.thinking.budget_tokens;
    assert.ok(Number.isInteger(budget) && budget >= 1024, `budget_tokens ${budget}`);
    assert.ok(sent.max_tokens > budget, `max_tokens ${sent.max_tokens} > budget ${budget}`);
  }
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: thinking comes back as reasoning_content and signed thinking_blocks", async () => {
  await using gateway = await startSdkGateway();
  const client = openaiClient(gateway);
  const completion = await client.chat.completions.create(
    THINK as ChatCompletionCreateParamsNonStreaming,
  );
  const upstream = await askDirectly(gateway.anthropic);
  const [thinking, text] = upstream.content;
  assert.equal(thinking.type, "thinking", JSON.stringify(upstream));
  assert.ok(thinking.signature.length > 0);
  const message = completion.choices[0]!.message as unknown as Obj;
  assert.equal(message.content, text.text);
  assert.equal(message.reasoning_content, thinking.thinking);
  assert.deepEqual(message.thinking_blocks, [thinking]);
  assert.equal(completion.choices[0]!.finish_reason, "stop");
  assert.equal(
    completion.usage?.completion_tokens_details?.reasoning_tokens,
    upstream.usage.output_tokens_details?.thinking_tokens,
  );

  const { events } = await streamChat(gateway, THINK);
  const chunks = chunksOf(events);
  const deltas = deltasOf(chunks);
  assert.equal(joined(deltas, "reasoning_content"), thinking.thinking);
  const assembled = assembleMessage(chunks);
  assert.equal(assembled.content, text.text);
  assert.deepEqual(assembled.thinking_blocks, [thinking], "the stream carries the signed block");
  assert.equal(finishOf(chunks), "stop");
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: redacted thinking comes back as a redacted_thinking block", async () => {
  await using gateway = await startSdkGateway();
  gateway.anthropic.turns = [{ redacted: true }, { redacted: true }, { redacted: true }];
  const res = await postChat(gateway, THINK);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const upstream = await askDirectly(gateway.anthropic);
  assert.equal(upstream.content[0].type, "redacted_thinking");
  const message = res.body.choices[0].message;
  assert.equal(message.content, upstream.content[1].text);
  assert.deepEqual(message.thinking_blocks, [upstream.content[0]]);
  const { events } = await streamChat(gateway, THINK);
  assert.deepEqual(assembleMessage(chunksOf(events)).thinking_blocks, message.thinking_blocks);
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: temperature 0.3 arrives as 0.3; top_p with it is dropped and named", async () => {
  await using gateway = await startSdkGateway();
  for (const stream of [false, true]) {
    const request = { model: "an-chat", messages: HELLO, temperature: 0.3, top_p: 0.9 };
    const res = stream ? await streamChat(gateway, request) : await postChat(gateway, request);
    assert.equal(res.status, 200, JSON.stringify(res));
    const sent = body(gateway.anthropic);
    assert.equal(sent.temperature, 0.3, "the temperature is not rescaled");
    assert.ok(!("top_p" in sent), `top_p does not reach the upstream: ${JSON.stringify(sent)}`);
    assert.ok(
      droppedParams(res.headers).includes("top_p"),
      `x-switchyard-dropped-params: ${res.headers.get("x-switchyard-dropped-params")}`,
    );
  }
  // Alone, top_p is passed on and nothing is reported dropped.
  const alone = await postChat(gateway, { model: "an-chat", messages: HELLO, top_p: 0.9 });
  assert.equal(alone.status, 200);
  assert.equal(body(gateway.anthropic).top_p, 0.9);
  assert.ok(!droppedParams(alone.headers).includes("top_p"));
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: cache_control reaches the blocks; cached tokens come back", async () => {
  await using gateway = await startSdkGateway();
  const system = "You are a careful assistant. ".repeat(40).trim();
  const request = {
    model: "an-chat",
    messages: [
      {
        role: "system",
        content: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "Here is a long document.", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Summarise it." },
        ],
      },
    ],
  };
  const warm = await postChat(gateway, request);
  assert.equal(warm.status, 200, JSON.stringify(warm.body));
  const sent = body(gateway.anthropic);
  assert.deepEqual(sent.system, [
    { type: "text", text: system, cache_control: { type: "ephemeral" } },
  ]);
  assert.deepEqual(sent.messages[0].content, [
    { type: "text", text: "Here is a long document.", cache_control: { type: "ephemeral" } },
    { type: "text", text: "Summarise it." },
  ]);
  // The second time, the prefix is read from the upstream's cache.
  const res = await postChat(gateway, request);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const upstream = (await askDirectly(gateway.anthropic)).usage;
  assert.ok(
    upstream.cache_read_input_tokens > 0,
    `the fake read its cache: ${JSON.stringify(upstream)}`,
  );
  const prompt = upstream.input_tokens + upstream.cache_read_input_tokens +
    upstream.cache_creation_input_tokens;
  const usage = res.body.usage;
  assert.equal(usage.prompt_tokens_details?.cached_tokens, upstream.cache_read_input_tokens);
  assert.equal(usage.prompt_tokens, prompt, "prompt_tokens counts the cached tokens too");
  assert.equal(usage.completion_tokens, upstream.output_tokens);
  assert.equal(usage.total_tokens, prompt + upstream.output_tokens);

  const { events } = await streamChat(gateway, {
    ...request,
    stream_options: { include_usage: true },
  });
  const last = chunksOf(events).at(-1);
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.prompt_tokens_details?.cached_tokens, upstream.cache_read_input_tokens);
  assert.equal(last.usage.prompt_tokens, prompt);
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: stop_reason refusal becomes finish_reason content_filter", async () => {
  await using gateway = await startSdkGateway();
  gateway.anthropic.turns = [{ stopReason: "refusal" }, { stopReason: "refusal" }];
  const res = await postChat(gateway, { model: "an-chat", messages: HELLO });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.choices[0].finish_reason, "content_filter");
  const { events } = await streamChat(gateway, { model: "an-chat", messages: HELLO });
  assert.equal(finishOf(chunksOf(events)), "content_filter");
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("fidelity/anthropic: an https image URL arrives as a url image source", async () => {
  await using gateway = await startSdkGateway();
  const url = "https://images.example.com/cat.png";
  const client = openaiClient(gateway);
  const completion = await client.chat.completions.create({
    model: "an-chat",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url } },
      ],
    }],
  });
  assert.match(completion.choices[0]!.message.content!, /What is in this picture/);
  assert.deepEqual(body(gateway.anthropic).messages[0].content, [
    { type: "text", text: "What is in this picture?" },
    { type: "image", source: { type: "url", url } },
  ]);
  assert.deepEqual(gateway.anthropic.violations, []);
});

// ---------------------------------------------------------------------------------------------
// The front door's own answers: GET /v1/models/{id}, and error bodies

Deno.test("models: GET /v1/models/{id} answers a visible model and 404s the rest", async () => {
  await using gateway = await startSdkGateway();
  const anonymous = openaiClient(gateway, null);
  const listed = await anonymous.models.list();
  for (const id of ["sim-chat", "an-chat", "oa-chat"]) {
    const model = await anonymous.models.retrieve(id);
    assert.equal(model.id, id);
    assert.equal(model.object, "model");
    assert.deepEqual(model, listed.data.find((m) => m.id === id), `${id}: as listed`);
  }
  for (const id of ["no-such-model", "sim-keyed", "sim-image"]) {
    await assert.rejects(anonymous.models.retrieve(id), (error: unknown) => {
      assert.ok(error instanceof NotFoundError, `${id}: ${error}`);
      assert.equal(error.status, 404);
      assert.equal(error.code, "model_not_found");
      return true;
    });
  }
  // With a key, the key-only model is visible.
  const keyed = await openaiClient(gateway).models.retrieve("sim-keyed");
  assert.equal(keyed.id, "sim-keyed");
});

/** A bad request: `POST /v1/<path>` with `body`, unless it says otherwise (`method`; `url` from
 * the server's root; `admin` sends the admin token). */
interface Bad {
  path?: string;
  url?: string;
  method?: string;
  body?: unknown;
  admin?: boolean;
  why: string;
}

/** Bad requests to each endpoint and the admin API, each answered with a 4xx. */
const BAD: Bad[] = [
  { path: "chat/completions", body: "{not json", why: "malformed JSON" },
  { path: "chat/completions", body: "", why: "an empty body" },
  { path: "chat/completions", body: [], why: "an array body" },
  { path: "chat/completions", body: { messages: HELLO }, why: "no model" },
  { path: "chat/completions", body: { model: 5, messages: HELLO }, why: "a number model" },
  { path: "chat/completions", body: { model: "sim-chat" }, why: "no messages" },
  { path: "chat/completions", body: { model: "nope", messages: HELLO }, why: "an unknown model" },
  { path: "chat/completions", body: { model: "sim-keyed", messages: HELLO }, why: "a key model" },
  {
    path: "chat/completions",
    body: { model: "sim-moderation", messages: HELLO },
    why: "a moderation model",
  },
  {
    path: "chat/completions",
    body: { model: "sim-chat", messages: HELLO, temperature: "hot" },
    why: "a string temperature",
  },
  {
    path: "chat/completions",
    body: { model: "sim-chat", messages: [{ role: "wizard", content: "hi" }] },
    why: "an unknown role",
  },
  {
    path: "chat/completions",
    body: { model: "sim-chat", messages: HELLO, max_tokens: -1 },
    why: "a negative max_tokens",
  },
  {
    path: "chat/completions",
    body: { model: "sim-chat", messages: HELLO, response_format: { type: "yaml" } },
    why: "an unknown response_format",
  },
  { path: "moderations", body: "{not json", why: "malformed JSON" },
  { path: "moderations", body: {}, why: "no input" },
  { path: "moderations", body: { input: 5 }, why: "a number input" },
  { path: "moderations", body: { model: 5, input: "hi" }, why: "a number model" },
  { path: "moderations", body: { model: "nope", input: "hi" }, why: "an unknown model" },
  { path: "moderations", body: { model: "sim-chat", input: "hi" }, why: "a chat model" },
  { path: "images/generations", body: "{not json", why: "malformed JSON" },
  { path: "images/generations", body: { prompt: "a cat" }, why: "no model" },
  { path: "images/generations", body: { model: 5, prompt: "a cat" }, why: "a number model" },
  { path: "images/generations", body: { model: "nope", prompt: "a cat" }, why: "unknown model" },
  {
    path: "images/generations",
    body: { model: "sim-image", prompt: "a cat" },
    why: "a preview model, anonymously",
  },
  {
    path: "images/generations",
    body: { model: "sim-chat", prompt: "a cat" },
    why: "a chat model",
  },
  { url: "/v1/models/nope", method: "GET", why: "an unknown model" },
  { url: "/v1/models/sim-image", method: "GET", why: "a preview model, anonymously" },
  { url: "/v1/models", body: {}, why: "a POST" },
  { url: "/v1/nothing-here", method: "GET", why: "an unknown path" },
  { url: "/admin/keys", method: "GET", why: "no admin token" },
  { url: "/admin/keys", admin: true, body: {}, why: "no name" },
  { url: "/admin/keys", admin: true, body: { name: 5 }, why: "a number name" },
  { url: "/admin/keys", admin: true, body: { name: "a", colour: "red" }, why: "an unknown field" },
  { url: "/admin/keys", admin: true, body: "{oops", why: "malformed JSON" },
  { url: "/admin/keys/key_nope", method: "PATCH", admin: true, body: {}, why: "nothing to change" },
  {
    url: "/admin/keys/key_nope",
    method: "PATCH",
    admin: true,
    body: { name: "x" },
    why: "an unknown key",
  },
  {
    url: "/admin/models/sim-x",
    method: "PUT",
    admin: true,
    body: { provider: "nope", chat_completions: true },
    why: "an unknown provider",
  },
  {
    url: "/admin/models/sim-x",
    method: "PUT",
    admin: true,
    body: { provider: "sim" },
    why: "a model that serves nothing",
  },
  { url: "/admin/models/nope", method: "GET", admin: true, why: "an unknown model" },
  { url: "/admin/logs?limit=0", method: "GET", admin: true, why: "a zero limit" },
  { url: "/admin/logs?sort=asc", method: "GET", admin: true, why: "an unknown parameter" },
  { url: "/admin/usage?day=today", method: "GET", admin: true, why: "a bad day" },
];

/** Sends a {@link Bad} request. */
function send(gateway: SdkGateway, bad: Bad): Promise<Response> {
  const { method = "POST", body, admin = false } = bad;
  const url = bad.url === undefined
    ? `${gateway.baseURL}/${bad.path}`
    : gateway.server.url + bad.url;
  const headers: Record<string, string> = admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(url, {
    method,
    headers,
    body: body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body),
    signal: deadline(),
  });
}

Deno.test("errors: every 4xx from chat, moderations, images, models and admin has a string code and a param key", async () => {
  await using gateway = await startSdkGateway();
  const problems: string[] = [];
  for (const bad of BAD) {
    const res = await send(gateway, bad);
    const text = await res.text();
    const at = `${bad.method ?? "POST"} ${bad.path ?? bad.url} with ${bad.why} (${res.status})`;
    if (res.status < 400 || res.status > 499) {
      problems.push(`${at}: status is not 4xx: ${text}`);
      continue;
    }
    let error: JsonBody;
    try {
      error = JSON.parse(text).error;
    } catch {
      problems.push(`${at}: not a JSON body: ${text}`);
      continue;
    }
    if (typeof error?.message !== "string") problems.push(`${at}: no message: ${text}`);
    if (typeof error?.type !== "string") problems.push(`${at}: no type: ${text}`);
    if (typeof error?.code !== "string") problems.push(`${at}: code is not a string: ${text}`);
    if (!error || !("param" in error)) problems.push(`${at}: no param key: ${text}`);
    else if (error.param !== null && typeof error.param !== "string") {
      problems.push(`${at}: param is neither null nor a string: ${text}`);
    }
  }
  assert.deepEqual(problems, []);
  // And through the SDK, for one of them.
  await assert.rejects(
    openaiClient(gateway).chat.completions.create({ model: "nope", messages: HELLO }),
    (error: unknown) => {
      assert.ok(error instanceof NotFoundError);
      assert.equal(error.code, "model_not_found");
      assert.equal(error.param, "model");
      return true;
    },
  );
});

/** One mistake's error on several endpoints. */
async function sameMistake(
  gateway: SdkGateway,
  requests: { path: string; body: unknown }[],
): Promise<{ status: number; error: Obj }[]> {
  const out = [];
  for (const { path, body } of requests) {
    const res = await post(gateway, path, body);
    out.push({ status: res.status, error: (await res.json()).error });
  }
  return out;
}

Deno.test("errors: the same mistake gets the same code and wording on every endpoint", async () => {
  await using gateway = await startSdkGateway();
  // `model` is optional on moderations (the default moderation model), so a missing model is a
  // mistake on chat and images only.
  const missing = await sameMistake(gateway, [
    { path: "chat/completions", body: { messages: HELLO } },
    { path: "images/generations", body: { prompt: "a cat" } },
  ]);
  const number = await sameMistake(gateway, [
    { path: "chat/completions", body: { model: 5, messages: HELLO } },
    { path: "moderations", body: { model: 5, input: "hi" } },
    { path: "images/generations", body: { model: 5, prompt: "a cat" } },
  ]);
  const empty = await sameMistake(gateway, [
    { path: "chat/completions", body: { model: "", messages: HELLO } },
    { path: "moderations", body: { model: "", input: "hi" } },
    { path: "images/generations", body: { model: "", prompt: "a cat" } },
  ]);
  for (
    const [what, answers, code, message] of [
      [
        "a missing model",
        missing,
        "missing_required_parameter",
        "Missing required parameter: 'model'.",
      ],
      [
        "model: 5",
        number,
        "invalid_type",
        "Invalid type for 'model': expected a string, but got a number.",
      ],
      [
        'model: ""',
        empty,
        "invalid_value",
        `Invalid value for 'model': expected a non-empty string, but got "".`,
      ],
    ] as const
  ) {
    const [first, ...rest] = answers;
    assert.equal(first!.status, 400, `${what}: ${JSON.stringify(answers)}`);
    assert.deepEqual(
      first!.error,
      { message, type: "invalid_request_error", code, param: "model" },
      `${what}: ${JSON.stringify(answers)}`,
    );
    for (const other of rest) {
      assert.deepEqual(other, first, `${what}: the same answer everywhere`);
    }
  }
  // The admin API words a mistake as the public endpoints do; the config file shows the same
  // reason after the field (tests/config_test.ts).
  const res = await fetch(`${gateway.server.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: 5 }),
  });
  assert.deepEqual(await res.json(), {
    error: {
      message: "Invalid type for 'name': expected a string, but got a number.",
      type: "invalid_request_error",
      code: "invalid_type",
      param: "name",
    },
  });
});
