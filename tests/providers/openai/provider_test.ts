/** The `openai` adapter against the byte-exact fake and hand-made upstreams: wire details of
 * the call, what reaches the upstream, what comes back, and how streams end. */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { OpenAIProvider, parseOpenAIError } from "../../../src/providers/openai/provider.ts";
import { startFakeOpenAI } from "../../support/fake_openai.ts";
import {
  assembleEvents,
  callContext,
  chatRequest,
  collect,
  providerDeps,
} from "../../support/provider_call.ts";
import { STYLES } from "../../support/provider_styles.ts";
import { gatewayError } from "../../support/rejection.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";

const openai = STYLES.find((s) => s.name === "openai")!;

Deno.test("OpenAIProvider asks api.openai.com for max_completion_tokens, others for max_tokens", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  await provider.chat(chatRequest({}, { maxTokens: 77 }), callContext());
  assert.equal((fake.last.body as Record<string, unknown>).max_tokens, 77);
  assert.equal("max_completion_tokens" in (fake.last.body as object), false);

  const sent: { url: string; body: Record<string, unknown>; auth: string | null }[] = [];
  const deps = providerDeps("openai", "https://api.openai.com/v1", "sk-real");
  deps.http = new FetchHttpClient((input, init) => {
    const headers = new Headers(init?.headers);
    sent.push({
      url: String(input),
      body: JSON.parse(String(init?.body)),
      auth: headers.get("authorization"),
    });
    return Promise.resolve(Response.json({
      id: "chatcmpl-x",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
  });
  await new OpenAIProvider(deps).chat(chatRequest({}, { maxTokens: 77 }), callContext());
  assert.equal(sent[0]!.url, "https://api.openai.com/v1/chat/completions");
  assert.equal(sent[0]!.auth, "Bearer sk-real");
  assert.equal(sent[0]!.body.max_completion_tokens, 77);
  assert.equal("max_tokens" in sent[0]!.body, false);
});

Deno.test("OpenAIProvider without a key (a local server) sends no Authorization; extra headers go", async () => {
  let headers = new Headers();
  const deps = providerDeps("openai", "http://127.0.0.1:11434/v1", null, {
    headers: { "x-team": "blue" },
  });
  deps.http = new FetchHttpClient((_input, init) => {
    headers = new Headers(init?.headers);
    return Promise.resolve(Response.json({
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    }));
  });
  const result = await new OpenAIProvider(deps).chat(chatRequest(), callContext());
  assert.deepEqual(result.parts, [{ type: "text", text: "ok" }]);
  assert.equal(headers.has("authorization"), false);
  assert.equal(headers.get("x-team"), "blue");
  assert.equal(headers.get("content-type"), "application/json");
});

Deno.test("OpenAIProvider: options and chat extras reach OpenAI; its extras come back", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const req = chatRequest({
    extras: {
      protocol: "openai_chat",
      fields: { logprobs: true, top_logprobs: 1, service_tier: "flex", store: false },
    },
  }, {
    temperature: 1.7,
    topP: 0.5,
    seed: 7,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    reasoning: { effort: "low" },
    output: {
      type: "json_schema",
      name: "reply",
      schema: { type: "object", properties: { text: { type: "string" } } },
      strict: true,
    },
    user: "u-1",
    metadata: { team: "blue" },
  });
  const result = await provider.chat(req, callContext());
  assert.deepEqual(fake.violations, []);
  const body = fake.last.body as Record<string, unknown>;
  for (
    const [key, value] of Object.entries({
      temperature: 1.7,
      top_p: 0.5,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      reasoning_effort: "low",
      user: "u-1",
      logprobs: true,
      top_logprobs: 1,
      service_tier: "flex",
      store: false,
    })
  ) assert.equal(body[key], value, key);
  assert.deepEqual(body.metadata, { team: "blue" });
  assert.deepEqual(body.response_format, {
    type: "json_schema",
    json_schema: {
      name: "reply",
      schema: { type: "object", properties: { text: { type: "string" } } },
      strict: true,
    },
  });

  assert.deepEqual(result.parts, [{ type: "text", text: "You said: Hello there" }]);
  const fields = result.extras?.fields ?? {};
  assert.equal(fields.service_tier, "flex");
  assert.equal(fields.system_fingerprint, "fp_fake0001");
  const [choice] = fields.choices as { logprobs: { content: { token: string }[] } }[];
  const logprobs = choice!.logprobs;
  assert.deepEqual(logprobs.content.map((l) => l.token), ["You ", "said: ", "Hello ", "there"]);

  const events = await collect(provider.chatStream({ ...req, stream: true }, callContext()));
  assert.deepEqual(fake.violations, []);
  const start = events[0]!;
  assert.ok(start.type === "start" && start.extras?.fields.service_tier === "flex");
  const finish = events.at(-1)!;
  assert.ok(finish.type === "finish");
  // Streamed, each text piece carries its own tokens' log probabilities, and the finish none.
  const pieces = events.flatMap((e) =>
    e.type === "block_delta" && e.delta.type === "text" ? [e.delta] : []
  );
  assert.deepEqual(pieces.flatMap((p) => p.logprobs ?? []), logprobs.content);
  assert.ok(pieces.every((p) => p.logprobs !== undefined), "every text piece has its own");
  assert.equal(finish.extras?.fields.choices, undefined, "none left for the finish");
});

Deno.test("OpenAIProvider: what the upstream cannot take is left out and named in ctx.dropped", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  const req = chatRequest({
    messages: [
      { role: "user", parts: [{ type: "text", text: "Hi" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "hm", signature: "sig", style: "anthropic" },
          { type: "text", text: "Hello" },
        ],
      },
      { role: "user", parts: [{ type: "text", text: "Bye", cache: { type: "ephemeral" } }] },
    ],
    extras: { protocol: "anthropic_messages", fields: { inference_geo: "us" } },
  }, { topK: 5, reasoning: { budgetTokens: 2048 } });
  const ctx = callContext();
  await provider.chat(req, ctx);
  assert.deepEqual(fake.violations, []);
  assert.deepEqual([...ctx.dropped].sort(), ["inference_geo", "reasoning_content", "top_k"]);
  assert.equal((fake.last.body as Record<string, unknown>).reasoning_effort, "low");

  const streamCtx = callContext();
  const stream = provider.chatStream({ ...req, stream: true }, streamCtx);
  assert.equal(streamCtx.dropped.size, 3, "known before the first event is read");
  await collect(stream);
  assert.deepEqual(fake.violations, []);
});

Deno.test("OpenAIProvider: DeepSeek's reasoning_content, streamed or not, with reasoning tokens", async () => {
  await using fake = startFakeOpenAI({ flavour: { reasoning: "They say hello. I echo." } });
  const { provider } = openai.make(fake.url, fake.apiKey);
  const result = await provider.chat(chatRequest(), callContext());
  assert.deepEqual(result.parts, [
    { type: "reasoning", text: "They say hello. I echo.", style: "openai" },
    { type: "text", text: "You said: Hello there" },
  ]);
  assert.deepEqual(result.usage, { input: 2, output: 9, cachedInput: 0, reasoning: 5 });
  const streamed = assembleEvents(
    await collect(provider.chatStream(chatRequest({ stream: true }), callContext())),
  );
  assert.deepEqual(streamed.parts, result.parts);
  assert.deepEqual(streamed.usage, result.usage);
  assert.equal(streamed.finish, "stop");
  assert.deepEqual(fake.violations, []);
});

Deno.test("OpenAIProvider: OpenRouter's reasoning field before tool calls", async () => {
  await using fake = startFakeOpenAI({
    flavour: { reasoning: "Weather needed.", reasoningField: "reasoning" },
  });
  const { provider } = openai.make(fake.url, fake.apiKey);
  const req = chatRequest({
    messages: [{ role: "user", parts: [{ type: "text", text: "Use get_weather for Paris" }] }],
  }, {
    tools: [{
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    }],
  });
  const result = await provider.chat(req, callContext());
  assert.deepEqual(result.parts.map((p) => p.type), ["reasoning", "tool_call"]);
  assert.equal(result.finish, "tool_calls");
  const streamed = assembleEvents(
    await collect(provider.chatStream({ ...req, stream: true }, callContext())),
  );
  assert.deepEqual(
    streamed.parts.map((p) => p.type === "tool_call" ? { ...p, id: "" } : p),
    result.parts.map((p) => p.type === "tool_call" ? { ...p, id: "" } : p),
  );
  assert.deepEqual(fake.violations, []);
});

Deno.test("OpenAIProvider: a refusal, streamed or not; cached prompt tokens", async () => {
  await using fake = startFakeOpenAI({ flavour: { refusal: "I can't help.", cachedTokens: 1 } });
  const { provider } = openai.make(fake.url, fake.apiKey);
  const result = await provider.chat(chatRequest(), callContext());
  assert.deepEqual(result.parts, [{ type: "refusal", text: "I can't help." }]);
  assert.deepEqual(result.usage, { input: 2, output: 3, cachedInput: 1, reasoning: 0 });
  const streamed = assembleEvents(
    await collect(provider.chatStream(chatRequest({ stream: true }), callContext())),
  );
  assert.deepEqual(streamed.parts, result.parts);
  assert.deepEqual(streamed.usage, result.usage);
  assert.deepEqual(fake.violations, []);
});

Deno.test("OpenAIProvider: an image by URL is passed on as a URL", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  await provider.chat(
    chatRequest({
      messages: [{
        role: "user",
        parts: [
          { type: "text", text: "What is this?" },
          { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
        ],
      }],
    }),
    callContext(),
  );
  assert.deepEqual(fake.violations, []);
  const body = fake.last.body as { messages: { content: unknown }[] };
  assert.deepEqual(body.messages[0]!.content, [
    { type: "text", text: "What is this?" },
    { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
  ]);
});

Deno.test("OpenAIProvider: a stream ending after the finish without [DONE] still completes", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  // The fake's stream for "Hello there": role, 4 pieces, finish, usage, [DONE] = 8 events.
  fake.faults = [{ endAfterEvents: 7 }];
  const events = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [{ type: "text", text: "You said: Hello there" }]);
  assert.equal(got.usage?.output, 4);
});

Deno.test("OpenAIProvider: a stream ending before the finish is a 502 after what came", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  fake.faults = [{ endAfterEvents: 3 }];
  const events: unknown[] = [];
  const error = await gatewayError(async () => {
    for await (const batch of provider.chatStream(chatRequest({ stream: true }), callContext())) {
      events.push(...batch);
    }
  });
  assert.equal(error.status, 502);
  assert.match(error.message, /ended before the completion was finished/);
  assert.ok(events.length >= 3);
});

Deno.test("OpenAIProvider: an error event mid-stream is thrown as the mapped ApiError", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = openai.make(fake.url, fake.apiKey);
  fake.faults = [{ errorAfterEvents: 2 }];
  const error = await gatewayError(() =>
    collect(provider.chatStream(chatRequest({ stream: true }), callContext()))
  );
  assert.ok(error instanceof ApiError);
  assert.equal(error.status, 502);
  assert.match(error.message, /Overloaded/);
});

Deno.test("parseOpenAIError reads OpenAI's body and compatible servers' variants", () => {
  assert.deepEqual(
    parseOpenAIError({
      error: { message: "m", type: "invalid_request_error", param: "messages", code: "x" },
    }),
    { message: "m", type: "invalid_request_error", param: "messages", code: "x" },
  );
  assert.equal(
    parseOpenAIError({ error: "model 'llama3' not found" }).message,
    "model 'llama3' not found",
  );
  assert.equal(parseOpenAIError({ detail: "Not Found" }).message, "Not Found");
  assert.equal(
    parseOpenAIError({ detail: [{ msg: "field required" }, { msg: "bad" }] }).message,
    "field required; bad",
  );
  assert.equal(parseOpenAIError({ error: { code: 400, message: "x" } }).code, "400");
  assert.equal(parseOpenAIError({ message: "plain" }).message, "plain");
  assert.equal(parseOpenAIError("<html>").message, null);
});
