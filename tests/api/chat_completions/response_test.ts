import assert from "node:assert/strict";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import {
  type CompletionHead,
  completionId,
  renderCompletion,
} from "../../../src/api/chat_completions/response.ts";

const HEAD: CompletionHead = {
  id: "chatcmpl-abc",
  created: 1_768_478_400,
  model: "gw-model",
  excludeReasoning: false,
};

function result(patch: Partial<CanonicalResult> = {}): CanonicalResult {
  return {
    parts: [{ type: "text", text: "Hello" }, { type: "text", text: " there" }],
    finish: "stop",
    usage: { input: 11, output: 3 },
    ...patch,
  };
}

Deno.test("a text result is a chat completion with the gateway's model id", () => {
  assert.deepEqual(renderCompletion(result({ id: "upstream-id" }), HEAD), {
    id: "chatcmpl-abc",
    object: "chat.completion",
    created: 1_768_478_400,
    model: "gw-model",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "Hello there", refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
  });
});

Deno.test("tool calls: content null, tool_calls in order, finish_reason tool_calls", () => {
  const completion = renderCompletion(
    result({
      parts: [
        { type: "tool_call", id: "call_1", name: "w", arguments: '{"city":"Oslo"}' },
        { type: "tool_call", id: "call_2", name: "t", arguments: "{}" },
      ],
      finish: "tool_calls",
    }),
    HEAD,
  );
  const choice = completion.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls");
  assert.deepEqual(choice.message, {
    role: "assistant",
    content: null,
    refusal: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "w", arguments: '{"city":"Oslo"}' } },
      { id: "call_2", type: "function", function: { name: "t", arguments: "{}" } },
    ],
  });
  const empty = renderCompletion(result({ parts: [], finish: "length" }), HEAD);
  assert.equal(empty.choices[0]!.message.content, "", "no parts at all: empty content");
});

Deno.test("a refusal is `refusal`, with content null, and content_filter stays", () => {
  const completion = renderCompletion(
    result({
      parts: [{ type: "refusal", text: "I can't help with that." }],
      finish: "content_filter",
      stopDetail: "refusal",
    }),
    HEAD,
  );
  assert.deepEqual(completion.choices[0], {
    index: 0,
    message: { role: "assistant", content: null, refusal: "I can't help with that." },
    logprobs: null,
    finish_reason: "content_filter",
    stop_reason: "refusal",
  });
});

Deno.test("reasoning: reasoning_content, and thinking_blocks for signed or redacted parts", () => {
  const parts: CanonicalResult["parts"] = [
    { type: "reasoning", text: "First, ", signature: "sig-1", style: "anthropic" },
    { type: "reasoning", text: "", redacted: "opaque", style: "anthropic" },
    { type: "reasoning", text: "then.", signature: "sig-3", style: "anthropic" },
    { type: "text", text: "Done." },
    { type: "tool_call", id: "toolu_1", name: "w", arguments: "{}" },
  ];
  const message = renderCompletion(result({ parts, finish: "tool_calls" }), HEAD).choices[0]!
    .message;
  assert.deepEqual(message, {
    role: "assistant",
    content: "Done.",
    refusal: null,
    reasoning_content: "First, then.",
    thinking_blocks: [
      { type: "thinking", thinking: "First, ", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "thinking", thinking: "then.", signature: "sig-3" },
    ],
    tool_calls: [{ id: "toolu_1", type: "function", function: { name: "w", arguments: "{}" } }],
  });
  const unsigned = renderCompletion(
    result({ parts: [{ type: "reasoning", text: "Hmm." }, { type: "text", text: "Yes." }] }),
    HEAD,
  ).choices[0]!.message;
  assert.equal(unsigned.reasoning_content, "Hmm.");
  assert.equal(unsigned.thinking_blocks, undefined, "nothing to send back: no blocks");
  const foreign = renderCompletion(
    result({ parts: [{ type: "reasoning", text: "", redacted: "enc", style: "openai" }] }),
    HEAD,
  ).choices[0]!.message;
  assert.equal(foreign.thinking_blocks, undefined, "another style's payload is no Anthropic block");
  const hidden = renderCompletion(result({ parts }), { ...HEAD, excludeReasoning: true })
    .choices[0]!.message;
  assert.equal(hidden.reasoning_content, undefined);
  assert.equal(hidden.thinking_blocks, undefined);
});

Deno.test("a paused turn is finish_reason length with stop_reason pause_turn", () => {
  const choice = renderCompletion(
    result({ finish: "pause", stopDetail: "pause_turn" }),
    HEAD,
  ).choices[0]!;
  assert.equal(choice.finish_reason, "length");
  assert.equal(choice.stop_reason, "pause_turn");
  assert.equal(choice.message.content, "Hello there", "the partial answer is kept");
  const bare = renderCompletion(result({ finish: "pause" }), HEAD).choices[0]!;
  assert.equal(bare.stop_reason, "pause_turn");
  assert.equal(
    renderCompletion(result({ finish: "error" }), HEAD).choices[0]!.finish_reason,
    "error",
  );
});

Deno.test("usage details where known: cached, cache writes, reasoning tokens", () => {
  const usage = renderCompletion(
    result({ usage: { input: 100, output: 40, cachedInput: 80, cacheWrite: 10, reasoning: 25 } }),
    HEAD,
  ).usage;
  assert.deepEqual(usage, {
    prompt_tokens: 100,
    completion_tokens: 40,
    total_tokens: 140,
    prompt_tokens_details: { cached_tokens: 80, cache_creation_tokens: 10 },
    completion_tokens_details: { reasoning_tokens: 25 },
  });
  assert.deepEqual(
    renderCompletion(result({ usage: { input: 5, output: 1, cacheWrite: 5 } }), HEAD).usage
      .prompt_tokens_details,
    { cached_tokens: 0, cache_creation_tokens: 5 },
  );
});

Deno.test("openai_chat extras are merged back where they belong; other protocols' are not", () => {
  const fields = {
    system_fingerprint: "fp_123",
    service_tier: "default",
    model: "upstream-model-v1",
    choices: [{
      logprobs: { content: [{ token: "Hello", logprob: -0.1 }] },
      message: { annotations: [{ type: "url_citation" }], content: "never" },
    }],
    usage: {
      prompt_tokens_details: { audio_tokens: 0, cached_tokens: 999 },
      completion_tokens_details: { accepted_prediction_tokens: 2 },
    },
  };
  const completion = renderCompletion(
    result({
      usage: { input: 11, output: 3, cachedInput: 4 },
      extras: { protocol: "openai_chat", fields },
    }),
    HEAD,
  ) as unknown as Record<string, unknown>;
  assert.equal(completion.model, "gw-model", "the gateway's model id wins");
  assert.equal(completion.system_fingerprint, "fp_123");
  assert.equal(completion.service_tier, "default");
  const choice = (completion.choices as Record<string, unknown>[])[0]!;
  assert.deepEqual(choice.logprobs, fields.choices[0]!.logprobs);
  assert.deepEqual(choice.message, {
    role: "assistant",
    content: "Hello there",
    refusal: null,
    annotations: [{ type: "url_citation" }],
  });
  assert.deepEqual(completion.usage, {
    prompt_tokens: 11,
    completion_tokens: 3,
    total_tokens: 14,
    prompt_tokens_details: { cached_tokens: 4, audio_tokens: 0 },
    completion_tokens_details: { accepted_prediction_tokens: 2 },
  });
  const other = renderCompletion(
    result({ extras: { protocol: "anthropic_messages", fields: { container: { id: "c" } } } }),
    HEAD,
  );
  assert.ok(!("container" in other));
  const hostile = renderCompletion(
    result({ extras: { protocol: "openai_chat", fields: JSON.parse('{"__proto__": {"x": 1}}') } }),
    HEAD,
  );
  assert.equal(Object.getPrototypeOf(hostile), Object.prototype);
});

Deno.test("completion ids: the upstream's as chatcmpl-…, else from the request id", () => {
  assert.equal(completionId("chatcmpl-xyz", "req_1"), "chatcmpl-xyz");
  assert.equal(completionId("msg_01ABC", "req_1"), "chatcmpl-01ABC");
  assert.equal(completionId("gen-42", "req_1"), "chatcmpl-gen-42");
  assert.equal(completionId(undefined, "req_9f8e"), "chatcmpl-9f8e");
  assert.equal(completionId("", "req_9f8e"), "chatcmpl-9f8e");
});
