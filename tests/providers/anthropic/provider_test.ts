/** The Anthropic adapter against the fake Anthropic upstream, which checks the wire format
 * (signatures included) and answers byte for byte as Anthropic does, streams split into small
 * slices. */
import assert from "node:assert/strict";
import type { Message, Options, Part, ToolSpec } from "../../../src/canonical/conversation.ts";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import {
  AnthropicProvider,
  parseAnthropicError,
} from "../../../src/providers/anthropic/provider.ts";
import { lacksCountTokens } from "../../../src/providers/types.ts";
import { ApiError } from "../../../src/errors.ts";
import {
  type FakeAnthropic,
  REDACTED_THINKING_TRIGGER,
  startFakeAnthropic,
  withSampledArguments,
} from "../../support/fake_anthropic.ts";
import { schemaErrors } from "../../support/json_schema.ts";
import {
  assembleEvents,
  callContext,
  chatRequest,
  collect,
  modelRecord,
  providerDeps,
} from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";

type Body = Record<string, unknown>;

/** An adapter for `fake`, and a call context for `upstreamModel`. */
function adapter(fake: FakeAnthropic, patch: Parameters<typeof providerDeps>[3] = {}) {
  const deps = providerDeps("anthropic", fake.url, fake.apiKey, patch);
  return new AnthropicProvider(deps, { initialBackoffMs: 1, maxBackoffMs: 4 });
}

function context(upstreamModel = "claude-sonnet-4-5") {
  return callContext(modelRecord({ upstream_model: upstreamModel }));
}

/** The answer to `messages` with `options`, non-streamed or streamed (assembled from checked
 * events), and the call's dropped params. */
async function ask(
  provider: AnthropicProvider,
  stream: boolean,
  messages: Message[],
  options: Partial<Options> = {},
  upstreamModel?: string,
): Promise<{ result: Omit<CanonicalResult, "id" | "extras">; dropped: string[] }> {
  const ctx = context(upstreamModel);
  const req = chatRequest({ messages, stream }, options);
  if (!stream) {
    const { id: _, extras: __, ...result } = await provider.chat(req, ctx);
    return { result, dropped: [...ctx.dropped].sort() };
  }
  const got = assembleEvents(await collect(provider.chatStream(req, ctx)));
  const result: Omit<CanonicalResult, "id" | "extras"> = {
    parts: got.parts,
    finish: got.finish!,
    usage: got.usage!,
  };
  if (got.detail !== undefined) result.stopDetail = got.detail;
  return { result, dropped: [...ctx.dropped].sort() };
}

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });
const WEATHER: ToolSpec = {
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

Deno.test("AnthropicProvider sends x-api-key and anthropic-version, never Authorization", async () => {
  await using fake = startFakeAnthropic({ version: "2023-06-01" });
  const provider = adapter(fake, {
    headers: { "anthropic-beta": "token-efficient-tools-2025-02-19" },
  });
  await provider.chat(chatRequest(), context());
  const headers = fake.last.headers;
  assert.equal(headers.get("x-api-key"), fake.apiKey);
  assert.equal(headers.get("anthropic-version"), "2023-06-01");
  assert.equal(headers.get("anthropic-beta"), "token-efficient-tools-2025-02-19");
  assert.equal(headers.has("authorization"), false);
  assert.equal(fake.last.path, "/v1/messages");
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider sends the configured anthropic_version", async () => {
  await using fake = startFakeAnthropic({ version: "2024-01-01" });
  await adapter(fake, { anthropic_version: "2024-01-01" }).chat(chatRequest(), context());
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider passes temperature unchanged (0.3 → 0.3, not halved), clamped to 1", async () => {
  await using fake = startFakeAnthropic();
  const provider = adapter(fake);
  for (const [sent, arrived] of [[0.3, 0.3], [1.6, 1]] as const) {
    await provider.chat(chatRequest({}, { temperature: sent }), context());
    assert.equal((fake.last.body as Body).temperature, arrived);
  }
  await provider.chat(chatRequest(), context());
  assert.equal("temperature" in (fake.last.body as Body), false);
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider sends max_tokens (default 256) and the upstream model name", async () => {
  await using fake = startFakeAnthropic();
  await adapter(fake).chat(chatRequest(), context("claude-haiku-4-5"));
  const body = fake.last.body as Body;
  assert.equal(body.max_tokens, 256);
  assert.equal(body.model, "claude-haiku-4-5");
});

Deno.test("AnthropicProvider: a bad tool-call argument string is a 400 before any upstream call", async () => {
  let calls = 0;
  const deps = providerDeps("anthropic", "http://127.0.0.1:9", "k");
  deps.http = new FetchHttpClient(() => {
    calls++;
    return Promise.reject(new Error("no"));
  });
  const req = chatRequest({
    stream: true,
    messages: [
      user("x"),
      { role: "assistant", parts: [{ type: "tool_call", id: "c", name: "f", arguments: "{oops" }] },
      {
        role: "tool",
        parts: [{ type: "tool_result", callId: "c", content: [], isError: false }],
      },
    ],
  });
  const provider = new AnthropicProvider(deps);
  for (
    const run of [
      () => provider.chat(req, context()),
      () => collect(provider.chatStream(req, context())),
    ]
  ) {
    const error = await gatewayError(run);
    assert.equal(error.status, 400);
    assert.equal(error.param, "messages[1].tool_calls[0].function.arguments");
  }
  assert.equal(calls, 0);
});

Deno.test("AnthropicProvider reports what Anthropic cannot honour in ctx.dropped, streams too", async () => {
  await using fake = startFakeAnthropic({ sliceBytes: 7 });
  const provider = adapter(fake);
  const options = { seed: 1, topP: 0.5, temperature: 0.5, presencePenalty: 1 };
  const req = (stream: boolean) =>
    chatRequest(
      { stream, extras: { protocol: "openai_chat", fields: { n: 1, logprobs: true } } },
      options,
    );
  const expected = ["logprobs", "n", "presence_penalty", "seed", "top_p"];
  const ctx = context();
  await provider.chat(req(false), ctx);
  assert.deepEqual([...ctx.dropped].sort(), expected);
  const streamed = context();
  const stream = provider.chatStream(req(true), streamed)[Symbol.asyncIterator]();
  await stream.next();
  assert.deepEqual([...streamed.dropped].sort(), expected);
  await stream.return?.();
  assert.deepEqual(fake.violations, []);
});

Deno.test("parseAnthropicError reads the error body", () => {
  assert.deepEqual(
    parseAnthropicError({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: "req_1",
    }),
    { message: "Overloaded", type: "overloaded_error", code: "overloaded_error", param: null },
  );
  assert.equal(parseAnthropicError("<html>").message, null);
});

for (const stream of [false, true]) {
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test(`AnthropicProvider (${stream ? "stream" : "JSON"}): ${name}`, fn);

  t("thinking comes back as signed reasoning, its tokens counted", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const { result } = await ask(adapter(fake), stream, [user("Hello there")], {
      reasoning: { effort: "low" },
    });
    assert.deepEqual((fake.last.body as Body).thinking, { type: "enabled", budget_tokens: 2048 });
    assert.equal((fake.last.body as Body).max_tokens, 2048 + 256);
    const [thinking, text] = result.parts;
    assert.equal(thinking?.type, "reasoning");
    assert.equal((thinking as Part & { type: "reasoning" }).text, "Thinking about: Hello there");
    assert.match((thinking as Part & { type: "reasoning" }).signature ?? "", /^[A-Za-z0-9+/]+=*$/);
    assert.equal((thinking as Part & { type: "reasoning" }).style, "anthropic");
    assert.deepEqual(text, { type: "text", text: "You said: Hello there" });
    assert.deepEqual(result.usage, {
      input: 2,
      output: 8,
      cachedInput: 0,
      cacheWrite: 0,
      reasoning: 4,
    });
    assert.deepEqual(fake.violations, []);
  });

  t("a tool loop with thinking: the history sent back as given is accepted", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const provider = adapter(fake);
    const options = { reasoning: { effort: "medium" as const }, tools: [WEATHER] };
    const question = user("Weather in Paris, please: get_weather");
    const first = await ask(provider, stream, [question], options);
    assert.equal(first.result.finish, "tool_calls");
    assert.deepEqual(first.result.parts.map((p) => p.type), ["reasoning", "tool_call"]);
    const toolCall = first.result.parts[1] as Part & { type: "tool_call" };
    assert.deepEqual(JSON.parse(toolCall.arguments), { city: "Paris" });
    const history: Message[] = [
      question,
      { role: "assistant", parts: first.result.parts },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: toolCall.id,
          content: [{ type: "text", text: "18C and sunny" }],
          isError: false,
        }],
      },
    ];
    const second = await ask(provider, stream, history, options);
    assert.deepEqual(fake.violations, []);
    assert.deepEqual(second.dropped, []);
    assert.equal(second.result.finish, "stop");
    assert.deepEqual(second.result.parts.at(-1), {
      type: "text",
      text: "Tool results: 18C and sunny",
    });
    const sent = (fake.last.body as { messages: Body[] }).messages[1]!;
    assert.deepEqual((sent.content as Body[])[0], {
      type: "thinking",
      thinking: (first.result.parts[0] as Part & { type: "reasoning" }).text,
      signature: (first.result.parts[0] as Part & { type: "reasoning" }).signature,
    });

    // Altered thinking is refused by the upstream, as Anthropic refuses it.
    const altered = structuredClone(history);
    (altered[1]!.parts[0] as Part & { type: "reasoning" }).text += " (edited)";
    const error = await gatewayError(() => ask(provider, stream, altered, options));
    assert.equal(error.status, 400);
    assert.match(error.message, /Invalid `signature` in `thinking` block/);
    assert.equal(error.code, "invalid_request_error");

    // Without the reasoning (an OpenAI client keeps none) the call goes without thinking.
    const bare = structuredClone(history);
    bare[1]!.parts = bare[1]!.parts.filter((p) => p.type !== "reasoning");
    const fallback = await ask(provider, stream, bare, options);
    assert.deepEqual(fallback.dropped, ["reasoning_effort"]);
    assert.equal("thinking" in (fake.last.body as Body), false);
    assert.equal(fallback.result.finish, "stop");
  });

  t("redacted thinking comes back and goes back as it was", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const provider = adapter(fake);
    const question = user(`Hi ${REDACTED_THINKING_TRIGGER}`);
    const first = await ask(provider, stream, [question], { reasoning: { effort: "low" } });
    const redacted = first.result.parts[0] as Part & { type: "reasoning" };
    assert.equal(redacted.text, "");
    assert.equal(typeof redacted.redacted, "string");
    await ask(provider, stream, [
      question,
      { role: "assistant", parts: first.result.parts },
      user("And?"),
    ], { reasoning: { effort: "low" } });
    const sent = (fake.last.body as { messages: Body[] }).messages[1]!;
    assert.deepEqual((sent.content as Body[])[0], {
      type: "redacted_thinking",
      data: redacted.redacted,
    });
    assert.deepEqual(fake.violations, []);
  });

  t("cache markers: the first call writes the prefix, the next reads it", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const provider = adapter(fake);
    const messages: Message[] = [
      {
        role: "system",
        parts: [{ type: "text", text: "Rules: ".repeat(40), cache: { type: "ephemeral" } }],
      },
      user("Hello there"),
    ];
    const first = await ask(provider, stream, messages);
    assert.deepEqual(first.result.usage, { input: 42, output: 4, cachedInput: 0, cacheWrite: 40 });
    const second = await ask(provider, stream, messages);
    assert.deepEqual(second.result.usage, { input: 42, output: 4, cachedInput: 40, cacheWrite: 0 });
    assert.deepEqual((fake.last.body as { system: Body[] }).system[0]!.cache_control, {
      type: "ephemeral",
    });
    assert.deepEqual(fake.violations, []);
  });

  t("refusal → content_filter, pause_turn → pause (never a plain stop)", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const provider = adapter(fake);
    fake.turns = [{ stopReason: "refusal" }, { stopReason: "pause_turn" }];
    const refused = await ask(provider, stream, [user("one two three four")]);
    assert.equal(refused.result.finish, "content_filter");
    assert.equal(refused.result.stopDetail, "refusal");
    const paused = await ask(provider, stream, [user("Hello there")]);
    assert.equal(paused.result.finish, "pause");
    assert.equal(paused.result.stopDetail, "pause_turn");
  });

  const REPORT = {
    type: "object",
    properties: {
      city: { type: "string", minLength: 2 },
      celsius: { type: "number", minimum: -90, maximum: 60 },
    },
    required: ["city", "celsius"],
    additionalProperties: false,
  };
  const output = { type: "json_schema", name: "report", schema: REPORT, strict: true } as const;

  t("a JSON schema on a model with structured outputs: output_config, JSON text", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    const { result } = await ask(adapter(fake), stream, [user("Weather in Paris")], { output });
    const body = fake.last.body as Body;
    assert.equal("tools" in body, false);
    assert.equal((body.output_config as Body).format !== undefined, true);
    assert.equal(result.finish, "stop");
    assert.equal(result.parts.length, 1);
    const text = (result.parts[0] as Part & { type: "text" }).text;
    assert.deepEqual(schemaErrors(REPORT, JSON.parse(text)), []);
    assert.deepEqual(fake.violations, []);
  });

  t("JSON without structured outputs: the forced tool's input comes back as text", async () => {
    await using fake = startFakeAnthropic({ sliceBytes: 7 });
    fake.script = withSampledArguments();
    const { result } = await ask(
      adapter(fake),
      stream,
      [user("Weather in Paris")],
      { output },
      "claude-3-5-haiku-latest",
    );
    const body = fake.last.body as Body;
    assert.deepEqual(body.tool_choice, { type: "tool", name: "json_output" });
    assert.equal(result.finish, "stop");
    assert.equal(result.parts.length, 1);
    const text = (result.parts[0] as Part & { type: "text" }).text;
    assert.deepEqual(schemaErrors(REPORT, JSON.parse(text)), []);
    assert.deepEqual(fake.violations, []);
  });
}

/** A server that answers each request with the next of `answers` (the last one repeated), and
 * the paths it was asked. */
function scriptedServer(answers: (() => Response)[]) {
  const paths: string[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (r) => {
    paths.push(new URL(r.url).pathname);
    await r.body?.cancel();
    return (answers[paths.length - 1] ?? answers.at(-1)!)();
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    paths,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("AnthropicProvider: count_tokens answered 404 or 405, whatever the body, is an upstream without it; not retried", async () => {
  const servers = {
    // Go's net/http (Ollama and other Go servers): plain text.
    404: () =>
      new Response("404 page not found\n", {
        status: 404,
        headers: { "content-type": "text/plain; charset=utf-8" },
      }),
    // Starlette, with the methods the path has.
    405: () =>
      new Response(JSON.stringify({ detail: "Method Not Allowed" }), {
        status: 405,
        headers: { "content-type": "application/json", allow: "GET" },
      }),
  };
  for (const [status, answer] of Object.entries(servers)) {
    await using server = scriptedServer([answer]);
    const provider = new AnthropicProvider(
      providerDeps("anthropic", server.url, "sk-test", { max_retries: 2 }),
      { initialBackoffMs: 1, maxBackoffMs: 4 },
    );
    const call = {
      protocol: "anthropic_messages" as const,
      endpoint: "count_tokens" as const,
      body: { messages: [] },
      headers: {},
      shown: { model: "claude" },
    };
    await assert.rejects(provider.passthrough(call, context()), (e: unknown) => {
      assert.ok(lacksCountTokens(e), `${status}: ${e}`);
      // Not a 5xx: a routed model neither falls back on it nor counts it against the route.
      assert.equal((e as ApiError).status, 404);
      return true;
    });
    assert.deepEqual(server.paths, ["/v1/messages/count_tokens"], `${status}: asked once`);
    // The same answer to a Messages call is the upstream failing (the model or path unknown).
    await assert.rejects(
      provider.passthrough({ ...call, endpoint: "messages" }, context()),
      (e: unknown) => {
        assert.ok(e instanceof ApiError && !lacksCountTokens(e));
        assert.equal(e.status, 502);
        return true;
      },
    );
  }
});

Deno.test("AnthropicProvider: count_tokens that fails otherwise keeps the mapping of every call", async () => {
  const failing = () => new Response("{}", { status: 500 });
  await using server = scriptedServer([failing]);
  const provider = new AnthropicProvider(
    providerDeps("anthropic", server.url, "sk-test", { max_retries: 2 }),
    { initialBackoffMs: 1, maxBackoffMs: 4 },
  );
  const call = {
    protocol: "anthropic_messages" as const,
    endpoint: "count_tokens" as const,
    body: { messages: [] },
    headers: {},
    shown: { model: "claude" },
  };
  await assert.rejects(provider.passthrough(call, context()), (e: unknown) => {
    assert.ok(e instanceof ApiError && !lacksCountTokens(e));
    assert.equal(e.status, 502);
    return true;
  });
  assert.equal(server.paths.length, 3, "retried as any call");
});
