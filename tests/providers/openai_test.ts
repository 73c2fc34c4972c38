import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { OpenAIProvider, parseOpenAIError } from "../../src/providers/openai.ts";
import { toOpenAIRequest } from "../../src/providers/openai_request.ts";
import { fromOpenAICompletion } from "../../src/providers/openai_response.ts";
import { OpenAIStreamNormalizer } from "../../src/providers/openai_stream.ts";
import type { ChatChunk } from "../../src/types/openai.ts";
import { startFakeOpenAI } from "../support/fake_openai.ts";
import {
  assemble,
  assertStreamContract,
  callContext,
  chatRequest,
  collect,
  providerDeps,
} from "../support/provider_call.ts";
import { STYLES } from "../support/provider_styles.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const OPTIONS = {
  upstreamModel: "gpt-up",
  stream: false,
  maxTokensField: "max_tokens",
} as const;

Deno.test("toOpenAIRequest: upstream model, rebuilt messages, no gateway-internal fields", () => {
  const req = chatRequest({
    messages: [
      { role: "developer", content: "Be brief.", name: "ops" },
      {
        role: "user",
        content: [
          { type: "text", text: "Hi" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "done" },
    ],
    stop: ["END"],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    tool_choice: "required",
    extra: { top_p: 0.5, seed: 7, model: "sneaky", stream: true },
  });
  assert.deepEqual(toOpenAIRequest(req, OPTIONS), {
    top_p: 0.5,
    seed: 7,
    model: "gpt-up",
    messages: [
      { role: "system", content: "Be brief.", name: "ops" },
      {
        role: "user",
        content: [
          { type: "text", text: "Hi" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", content: "done", tool_call_id: "call_1" },
    ],
    max_tokens: 256,
    stop: ["END"],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    tool_choice: "required",
  });
});

Deno.test("toOpenAIRequest: streams always ask for usage; temperature only when given", () => {
  const body = toOpenAIRequest(
    chatRequest({ temperature: 0.3, temperature_given: true, tool_choice: "auto" }),
    { ...OPTIONS, stream: true, maxTokensField: "max_completion_tokens" },
  );
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(body.stream, true);
  assert.equal(body.temperature, 0.3);
  assert.equal(body.max_completion_tokens, 256);
  assert.equal("max_tokens" in body, false);
  assert.equal("tool_choice" in body, false, "no tool_choice without tools");
  const plain = toOpenAIRequest(chatRequest(), OPTIONS);
  assert.equal("temperature" in plain || "stream" in plain || "stream_options" in plain, false);
});

Deno.test("OpenAIProvider asks api.openai.com for max_completion_tokens, others for max_tokens", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = STYLES[0]!.make(fake.url, fake.apiKey);
  await provider.chat(chatRequest({ max_tokens: 77 }), callContext());
  assert.equal((fake.last.body as Record<string, unknown>).max_tokens, 77);
  assert.equal("max_completion_tokens" in (fake.last.body as object), false);

  const sent: { url: string; body: Record<string, unknown>; auth: string | null }[] = [];
  const deps = providerDeps("openai", "https://api.openai.com/v1", "sk-real");
  deps.fetch = (input, init) => {
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
  };
  await new OpenAIProvider(deps).chat(chatRequest({ max_tokens: 77 }), callContext());
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
  deps.fetch = (_input, init) => {
    headers = new Headers(init?.headers);
    return Promise.resolve(Response.json({
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    }));
  };
  await new OpenAIProvider(deps).chat(chatRequest(), callContext());
  assert.equal(headers.has("authorization"), false);
  assert.equal(headers.get("x-team"), "blue");
  assert.equal(headers.get("content-type"), "application/json");
});

Deno.test("OpenAIProvider forwards temperature and sampling extras and streams with usage", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = STYLES[0]!.make(fake.url, fake.apiKey);
  const chunks = await collect(provider.chatStream(
    chatRequest({
      stream: true,
      temperature: 1.7,
      temperature_given: true,
      extra: { presence_penalty: 0.5 },
    }),
    callContext(),
  ));
  const body = fake.last.body as Record<string, unknown>;
  assert.equal(body.temperature, 1.7);
  assert.equal(body.presence_penalty, 0.5);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.deepEqual(fake.violations, []);
  assert.ok(chunks.every((c) => c.model === "gw-model"));
  assert.ok(chunks.at(-1)?.usage);
});

Deno.test("fromOpenAICompletion: gateway model, upstream extras dropped, quirks smoothed", () => {
  const completion = fromOpenAICompletion(
    {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "gpt-up-2025-01-01",
      system_fingerprint: "fp_x",
      service_tier: "default",
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: null,
          annotations: [],
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "f", arguments: { a: 1 } } },
            { type: "function", function: { name: "g", arguments: "{}" } },
          ],
        },
        logprobs: null,
        finish_reason: "function_call",
      }],
      usage: {
        prompt_tokens: 5,
        completion_tokens: 7,
        total_tokens: 12,
        prompt_tokens_details: {},
      },
    },
    "gw",
    NOW,
  );
  assert.equal(completion.model, "gw");
  assert.equal(completion.choices[0]!.finish_reason, "tool_calls");
  const calls = completion.choices[0]!.message.tool_calls!;
  assert.equal(calls[0]!.function.arguments, '{"a":1}');
  assert.match(calls[1]!.id, /^call_/);
  assert.deepEqual(completion.usage, { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
  assert.equal("system_fingerprint" in completion, false);
  assert.equal("annotations" in completion.choices[0]!.message, false);
});

Deno.test("fromOpenAICompletion: no usage → zeros; no content and no tools → empty string", () => {
  const completion = fromOpenAICompletion(
    { choices: [{ message: { role: "assistant" }, finish_reason: "stop" }] },
    "gw",
    NOW,
  );
  assert.equal(completion.choices[0]!.message.content, "");
  assert.deepEqual(completion.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  assert.equal(completion.created, NOW / 1000);
  for (const bad of [null, { choices: [] }, { choices: [{}] }, "text"]) {
    assert.throws(
      () => fromOpenAICompletion(bad, "gw", NOW),
      (e) => e instanceof ApiError && e.status === 502,
    );
  }
});

function normalize(upstream: Record<string, unknown>[]): ChatChunk[] {
  const n = new OpenAIStreamNormalizer("gw", NOW);
  return [...upstream.flatMap((c) => n.push(c)), ...n.end()];
}

const c = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-9",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "upstream-name",
  choices,
  ...extra,
});

Deno.test("OpenAIStreamNormalizer: role added, finish held to the end, usage on a choice chunk", () => {
  // An upstream (vLLM/Ollama-like) that omits the role, sends the finish with the last text
  // and puts usage on that same chunk.
  const chunks = normalize([
    c([{ index: 0, delta: { content: "Hel" }, finish_reason: null }]),
    c([{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }], {
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    }),
  ]);
  assertStreamContract(chunks, "gw");
  assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: "assistant", content: "" });
  assert.equal(chunks[0]!.id, "chatcmpl-9");
  const got = assemble(chunks);
  assert.equal(got.content, "Hello");
  assert.equal(got.finish, "stop");
  assert.deepEqual(got.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
});

Deno.test("OpenAIStreamNormalizer: a whole tool call in one chunk is split into header and arguments", () => {
  const chunks = normalize([
    c([{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }]),
    c([{
      index: 0,
      delta: {
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "f", arguments: '{"x":1}' } },
          { index: 1, id: "call_b", function: { name: "g", arguments: { y: 2 } } },
        ],
      },
      finish_reason: "tool_calls",
    }]),
    c([], { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
  ]);
  assertStreamContract(chunks, "gw");
  const got = assemble(chunks);
  assert.deepEqual(got.calls, [
    { id: "call_a", name: "f", arguments: '{"x":1}' },
    { id: "call_b", name: "g", arguments: '{"y":2}' },
  ]);
  assert.equal(got.finish, "tool_calls");
});

Deno.test("OpenAIStreamNormalizer: the recorded gpt-4o-mini tool stream passes through in shape", () => {
  const chunks = normalize([
    c([{
      index: 0,
      delta: {
        role: "assistant",
        content: null,
        tool_calls: [{
          index: 0,
          id: "call_F9Za",
          type: "function",
          function: { name: "GetPersonAge", arguments: "" },
        }],
        refusal: null,
      },
      logprobs: null,
      finish_reason: null,
    }], { usage: null }),
    c([{
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: '{"' } }] },
      finish_reason: null,
    }], { usage: null }),
    c([{
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: 'name":"Al"}' } }] },
      finish_reason: null,
    }], { usage: null }),
    c([{ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" }], { usage: null }),
    c([], { usage: { prompt_tokens: 61, completion_tokens: 16, total_tokens: 77 } }),
  ]);
  assertStreamContract(chunks, "gw");
  assert.deepEqual(chunks[0]!.choices[0]!.delta, {
    role: "assistant",
    content: null,
    tool_calls: [{
      index: 0,
      id: "call_F9Za",
      type: "function",
      function: { name: "GetPersonAge", arguments: "" },
    }],
  });
  assert.equal(chunks.length, 5);
  assert.deepEqual(assemble(chunks).usage, {
    prompt_tokens: 61,
    completion_tokens: 16,
    total_tokens: 77,
  });
});

Deno.test("OpenAIStreamNormalizer skips empty-choice chunks (Azure prompt filter results)", () => {
  const chunks = normalize([
    c([], { prompt_filter_results: [] }),
    c([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    c([{ index: 0, delta: { content: "x" }, finish_reason: null }]),
    c([{ index: 0, delta: {}, finish_reason: "length" }]),
  ]);
  assertStreamContract(chunks, "gw");
  assert.equal(chunks.length, 4);
  assert.equal(assemble(chunks).finish, "length");
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
  assert.equal(parseOpenAIError("<html>").message, null);
});

Deno.test("OpenAIProvider: a stream ending after the finish without [DONE] still completes", async () => {
  await using fake = startFakeOpenAI();
  const { provider } = STYLES[0]!.make(fake.url, fake.apiKey);
  // The fake's stream for "Hello there": role, 4 pieces, finish, usage, [DONE] = 8 events.
  fake.faults = [{ endAfterEvents: 7 }];
  const chunks = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  assertStreamContract(chunks, "gw-model");
  assert.equal(assemble(chunks).content, "You said: Hello there");
});
