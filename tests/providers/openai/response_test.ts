/** Chat completion → canonical result: parts in order, finish, usage with details, and what the
 * result does not model kept as extras for a chat front door. */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { fromOpenAICompletion } from "../../../src/providers/openai/response.ts";

const completion = (message: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-up-2025-01-01",
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
  ...more,
});

Deno.test("fromOpenAICompletion: everything OpenAI sends, modelled or kept as extras", () => {
  const logprobs = {
    content: [{ token: "Hi", logprob: -0.1, bytes: [72, 105], top_logprobs: [] }],
    refusal: null,
  };
  const annotations = [{
    type: "url_citation",
    url_citation: { url: "https://example.com", title: "Ex", start_index: 0, end_index: 2 },
  }];
  const result = fromOpenAICompletion({
    id: "chatcmpl-9",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-up-2025-01-01",
    system_fingerprint: "fp_1",
    service_tier: "flex",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: "Hi",
        refusal: null,
        annotations,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "f", arguments: '{"a":1}' },
        }],
      },
      logprobs,
      finish_reason: "tool_calls",
    }],
    usage: {
      prompt_tokens: 50,
      completion_tokens: 70,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 30, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 64,
        audio_tokens: 0,
        accepted_prediction_tokens: 1,
        rejected_prediction_tokens: 2,
      },
    },
  });
  assert.deepEqual(result, {
    id: "chatcmpl-9",
    parts: [
      { type: "text", text: "Hi" },
      { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' },
    ],
    finish: "tool_calls",
    usage: { input: 50, output: 70, cachedInput: 30, reasoning: 64 },
    extras: {
      protocol: "openai_chat",
      fields: {
        system_fingerprint: "fp_1",
        service_tier: "flex",
        usage: {
          prompt_tokens_details: { audio_tokens: 0 },
          completion_tokens_details: {
            audio_tokens: 0,
            accepted_prediction_tokens: 1,
            rejected_prediction_tokens: 2,
          },
        },
        choices: [{ logprobs, message: { annotations } }],
      },
    },
  });
});

Deno.test("fromOpenAICompletion: reasoning first, from reasoning_content or reasoning", () => {
  const deepseek = fromOpenAICompletion(
    completion({ content: "4", reasoning_content: "2+2 is 4." }),
  );
  assert.deepEqual(deepseek.parts, [
    { type: "reasoning", text: "2+2 is 4.", style: "openai" },
    { type: "text", text: "4" },
  ]);
  assert.equal(deepseek.extras, undefined);
  const openrouter = fromOpenAICompletion(completion({ content: "4", reasoning: "Add." }));
  assert.deepEqual(openrouter.parts[0], { type: "reasoning", text: "Add.", style: "openai" });
  const both = fromOpenAICompletion(
    completion({ content: "4", reasoning_content: "one", reasoning: "one" }),
  );
  assert.deepEqual(both.parts.map((p) => p.type), ["reasoning", "text"]);
  const details = [{ type: "reasoning.encrypted", data: "xyz" }];
  const kept = fromOpenAICompletion(
    completion({ content: "4", reasoning: "r", reasoning_details: details }),
  );
  assert.deepEqual(kept.extras, {
    protocol: "openai_chat",
    fields: { choices: [{ message: { reasoning_details: details } }] },
  });
});

Deno.test("fromOpenAICompletion: a refusal is a refusal part", () => {
  const result = fromOpenAICompletion(
    completion({ content: null, refusal: "I can't help with that." }),
  );
  assert.deepEqual(result.parts, [{ type: "refusal", text: "I can't help with that." }]);
  assert.equal(result.finish, "stop");
});

Deno.test("fromOpenAICompletion: compatible servers' quirks are smoothed", () => {
  const result = fromOpenAICompletion({
    choices: [{
      message: {
        content: [{ type: "text", text: "a" }, { type: "text", text: "b" }],
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "f", arguments: { a: 1 } } },
          { type: "function", function: { name: "g" } },
        ],
      },
      finish_reason: "function_call",
    }],
  });
  assert.equal(result.id, undefined);
  assert.equal(result.finish, "tool_calls");
  assert.deepEqual(result.usage, { input: 0, output: 0 });
  const [text, f, g] = result.parts;
  assert.deepEqual(text, { type: "text", text: "ab" });
  assert.deepEqual(f, { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' });
  assert.ok(g?.type === "tool_call" && /^call_\w{24}$/.test(g.id) && g.arguments === "{}");
});

Deno.test("fromOpenAICompletion: finish reasons", () => {
  const finish = (reason: unknown, calls = false) =>
    fromOpenAICompletion({
      choices: [{
        message: {
          content: "x",
          ...(calls ? { tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] } : {}),
        },
        finish_reason: reason,
      }],
    }).finish;
  assert.equal(finish("stop"), "stop");
  assert.equal(finish("length"), "length");
  assert.equal(finish("content_filter"), "content_filter");
  assert.equal(finish("tool_calls", true), "tool_calls");
  assert.equal(finish("eos"), "stop");
  assert.equal(finish(null, true), "tool_calls");
  assert.equal(finish(undefined), "stop");
});

Deno.test("fromOpenAICompletion: no content and no tools → no parts; unknown fields kept", () => {
  const result = fromOpenAICompletion({
    choices: [{
      message: { role: "assistant", content: "" },
      finish_reason: "stop",
      stop_reason: 7,
    }],
    prompt_filter_results: [{ prompt_index: 0 }],
    usage: { prompt_tokens: 3, completion_tokens: 0, prompt_cache_hit_tokens: 2 },
  });
  assert.deepEqual(result.parts, []);
  assert.deepEqual(result.usage, { input: 3, output: 0 });
  assert.deepEqual(result.extras?.fields, {
    prompt_filter_results: [{ prompt_index: 0 }],
    usage: { prompt_cache_hit_tokens: 2 },
    choices: [{ stop_reason: 7 }],
  });
});

Deno.test("fromOpenAICompletion: an answer without choices or messages is a 502", () => {
  for (
    const bad of [
      null,
      "text",
      { choices: [] },
      { choices: [{}] },
      { choices: [{ message: { tool_calls: [{ function: {} }] } }] },
      { choices: [{ message: { tool_calls: ["x"] } }] },
    ]
  ) {
    assert.throws(
      () => fromOpenAICompletion(bad),
      (e) => e instanceof ApiError && e.status === 502,
      JSON.stringify(bad),
    );
  }
});
