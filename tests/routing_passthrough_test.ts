/**
 * Same-protocol pass-through on a model with several routes, over a real port: a Messages call
 * to a model whose routes all reach Anthropic upstreams, and a Responses call to one whose
 * routes all speak OpenAI's Responses API, are forwarded as the client wrote them (fields the
 * gateway does not model kept) and fall back to the next route before the answer. A model whose
 * routes mix styles is translated on every route.
 */
import assert from "node:assert/strict";
import { parseTranscript } from "./support/messages_stream.ts";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { startFakeOpenAIResponses } from "./support/fake_openai_responses.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

interface Gateway extends AsyncDisposable {
  server: TestServer;
  /** The Anthropic fakes of `claude-routed` (first, second). */
  anthropic: [FakeUpstream, FakeUpstream];
  /** The Responses fakes of `gpt-routed` (first, second). */
  responses: [FakeUpstream, FakeUpstream];
  /** The OpenAI chat fake that `mixed` tries first (its second route is `anthropic[1]`). */
  openai: FakeUpstream;
}

async function gateway(): Promise<Gateway> {
  const anthropic = [startFakeAnthropic(), startFakeAnthropic()] as [FakeUpstream, FakeUpstream];
  const responses = [startFakeOpenAIResponses(), startFakeOpenAIResponses()] as [
    FakeUpstream,
    FakeUpstream,
  ];
  const openai = startFakeOpenAI();
  const keys: Record<string, string> = {};
  const server = await startServer({
    random: () => 0,
    config: testConfig((raw) => {
      const providers = raw.providers as unknown[];
      anthropic.forEach((fake, i) => {
        keys[`AN${i}_KEY`] = fake.apiKey;
        providers.push({
          id: `an${i}`,
          style: "anthropic",
          base_url: fake.url,
          api_key_env: `AN${i}_KEY`,
          max_retries: 0,
        });
      });
      responses.forEach((fake, i) => {
        keys[`RE${i}_KEY`] = fake.apiKey;
        providers.push({
          id: `re${i}`,
          style: "openai",
          responses_api: true,
          base_url: `${fake.url}/v1`,
          api_key_env: `RE${i}_KEY`,
          max_retries: 0,
        });
      });
      keys.OA_KEY = openai.apiKey;
      providers.push({
        id: "oa",
        style: "openai",
        base_url: `${openai.url}/v1`,
        api_key_env: "OA_KEY",
        max_retries: 0,
      });
      (raw.models as unknown[]).push(
        {
          id: "claude-routed",
          chat_completions: true,
          routes: [
            { provider: "an0", upstream_model: "claude-first" },
            { provider: "an1", upstream_model: "claude-second" },
          ],
        },
        {
          id: "gpt-routed",
          chat_completions: true,
          routes: [
            { provider: "re0", upstream_model: "gpt-first" },
            { provider: "re1", upstream_model: "gpt-second" },
          ],
        },
        {
          id: "mixed",
          chat_completions: true,
          routes: [
            { provider: "oa", upstream_model: "gpt-mixed" },
            { provider: "an1", upstream_model: "claude-mixed" },
          ],
        },
      );
    }),
    env: (name) => keys[name],
  });
  return {
    server,
    anthropic,
    responses,
    openai,
    async [Symbol.asyncDispose]() {
      await server.close();
      for (const fake of [...anthropic, ...responses, openai]) await fake.close();
    },
  };
}

function postMessages(g: Gateway, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${g.server.url}/v1/messages`, {
    method: "POST",
    headers: { "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

/** A Messages body with a field the gateway does not model and a cache marker. */
const MESSAGE = {
  model: "claude-routed",
  max_tokens: 100,
  metadata: { user_id: "user-7" },
  system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
  messages: [{ role: "user", content: "Hello there" }],
};

for (const stream of [false, true]) {
  Deno.test(`routing pass-through: a Messages ${stream ? "stream" : "call"} to Anthropic routes falls back and reaches the next one as written`, async () => {
    await using g = await gateway();
    g.anthropic[0].faults = [{ status: 529, errorType: "overloaded_error" }];
    const res = await postMessages(g, { ...MESSAGE, stream });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(res.headers.get("x-switchyard-route"), "an1/claude-second");
    assert.equal(g.anthropic[0].received.length, 1);
    assert.equal(g.anthropic[1].received.length, 1);
    const sent = g.anthropic[1].last.body as Record<string, unknown>;
    assert.deepEqual(sent, { ...MESSAGE, stream, model: "claude-second" });
    if (stream) {
      const events = parseTranscript(text);
      assert.equal(events.at(-1)?.event, "message_stop");
      const start = events.find((e) => e.event === "message_start")!;
      assert.equal((start.data as { message: { model: string } }).message.model, "claude-routed");
    } else {
      assert.equal(JSON.parse(text).model, "claude-routed");
    }
  });
}

Deno.test("routing pass-through: a caller's error from an Anthropic route is not retried", async () => {
  await using g = await gateway();
  g.anthropic[0].faults = [{ status: 400, errorType: "invalid_request_error" }];
  const res = await postMessages(g, MESSAGE);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).type, "error");
  assert.equal(g.anthropic[1].received.length, 0);
});

Deno.test("routing pass-through: a Responses call to responses_api routes falls back and reaches the next one as written", async () => {
  await using g = await gateway();
  g.responses[0].faults = [{ status: 500 }];
  const body = {
    model: "gpt-routed",
    input: "Hello there",
    store: false,
    prompt_cache_key: "cache-7",
  };
  const res = await fetch(`${g.server.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  assert.equal(answer.model, "gpt-routed");
  assert.equal(g.responses[0].received.length, 1);
  assert.equal(g.responses[1].received.length, 1);
  const sent = g.responses[1].last.body as Record<string, unknown>;
  assert.equal(sent.model, "gpt-second");
  assert.equal(sent.prompt_cache_key, "cache-7");
});

Deno.test("routing pass-through: a model whose routes mix styles is translated on every route", async () => {
  await using g = await gateway();
  g.openai.faults = [{ status: 500 }];
  const res = await postMessages(g, { ...MESSAGE, model: "mixed" });
  assert.equal(res.status, 200, await res.text());
  assert.equal(res.headers.get("x-switchyard-route"), "an1/claude-mixed");
  // The first route got a chat completion (translated), the second a Messages call built by the
  // gateway from the canonical request.
  const first = g.openai.last;
  assert.equal(first.path, "/v1/chat/completions");
  assert.equal((first.body as { model: string }).model, "gpt-mixed");
  assert.ok(Array.isArray((first.body as { messages: unknown[] }).messages));
  assert.equal((g.anthropic[1].last.body as { model: string }).model, "claude-mixed");
});
