import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ChatChunkRenderer, type StreamHead } from "../../../src/api/chat_completions/stream.ts";
import { ApiError } from "../../../src/errors.ts";
import { assemble, assertStreamContract } from "../../support/provider_call.ts";
import { textEvents, toolCallEvents } from "../../support/events.ts";

const HEAD: StreamHead = {
  requestId: "req_0123",
  created: 1_768_478_400,
  model: "gw-model",
  includeUsage: true,
  excludeReasoning: false,
};

const decoder = new TextDecoder();

/** The `data:` payloads of some SSE bytes. */
function datas(bytes: Uint8Array | null): string[] {
  if (bytes === null) return [];
  const text = decoder.decode(bytes);
  assert.ok(text.endsWith("\n\n"));
  return text.slice(0, -2).split("\n\n").map((e) => {
    assert.ok(e.startsWith("data: ") && !e.includes("\n"), e);
    return e.slice("data: ".length);
  });
}

/** Renders batches (each event its own batch unless grouped) and returns the chunks and the
 * raw payloads, the closing ones included. */
function render(batches: CanonicalEvent[][], head: Partial<StreamHead> = {}) {
  const renderer = new ChatChunkRenderer({ ...HEAD, ...head });
  const payloads: string[] = [];
  for (const batch of batches) payloads.push(...datas(renderer.render(batch)));
  payloads.push(...datas(renderer.end()));
  assert.equal(payloads.pop(), "[DONE]");
  // deno-lint-ignore no-explicit-any
  const chunks = payloads.map((p) => JSON.parse(p)) as any[];
  return { chunks, renderer };
}

const each = (events: CanonicalEvent[]) => events.map((e) => [e]);

Deno.test("a text stream: role first, one chunk per piece, finish, usage, [DONE]", () => {
  const { chunks } = render(each(textEvents(["Hel", "lo"])));
  assertStreamContract(chunks, "gw-model");
  assert.deepEqual(chunks.map((c) => c.choices[0]?.delta), [
    { role: "assistant", content: "" },
    { content: "Hel" },
    { content: "lo" },
    {},
    undefined,
  ]);
  assert.equal(chunks[0].id, "chatcmpl-test", "the start event's id");
  assert.equal(chunks[0].created, 1_768_478_400);
  assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
  assert.deepEqual(chunks.at(-1), {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1_768_478_400,
    model: "gw-model",
    choices: [],
    usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
  });
  assert.deepEqual(chunks.at(-2).choices, [
    { index: 0, delta: {}, logprobs: null, finish_reason: "stop" },
  ]);
});

Deno.test("without include_usage: no usage field, no usage chunk", () => {
  const { chunks } = render(each(textEvents(["a"])), { includeUsage: false });
  assertStreamContract(chunks, "gw-model", { usageChunk: false });
  assert.ok(chunks.every((c) => !("usage" in c)));
});

Deno.test("a batch is one write; nothing is written before the first content", () => {
  const renderer = new ChatChunkRenderer(HEAD);
  const events = textEvents(["a", "b"]);
  assert.equal(renderer.render(events.slice(0, 1)), null, "start alone: nothing yet");
  assert.equal(renderer.render(events.slice(1, 2)), null, "an empty block: nothing yet either");
  assert.equal(datas(renderer.render(events.slice(2, 4))).length, 3, "role, a, b");
  assert.equal(renderer.render([{ type: "block_stop", index: 0 }]), null);
});

Deno.test("tool calls: the first fragment carries the role, id, type and name", () => {
  const events: CanonicalEvent[] = [
    { type: "start" },
    ...toolCallEvents(0, "call_a", "get_time", ['{"zone"', ':"WET"}']),
    ...toolCallEvents(1, "call_b", "get_weather", ["{}"]),
    { type: "usage", usage: { input: 20, output: 9 } },
    { type: "finish", reason: "tool_calls" },
  ];
  const { chunks } = render(each(events));
  assertStreamContract(chunks, "gw-model");
  assert.equal(chunks[0].id, "chatcmpl-0123", "no upstream id: one from the request id");
  assert.deepEqual(chunks[0].choices[0].delta, {
    role: "assistant",
    content: null,
    tool_calls: [{
      index: 0,
      id: "call_a",
      type: "function",
      function: { name: "get_time", arguments: "" },
    }],
  });
  const message = assemble(chunks);
  assert.equal(message.finish, "tool_calls");
  assert.deepEqual(message.calls, [
    { id: "call_a", name: "get_time", arguments: '{"zone":"WET"}' },
    { id: "call_b", name: "get_weather", arguments: "{}" },
  ]);
});

Deno.test("text then a tool call: tool call indexes count tool calls, not blocks", () => {
  const events: CanonicalEvent[] = [
    { type: "start" },
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "Checking." } },
    { type: "block_stop", index: 0 },
    ...toolCallEvents(1, "toolu_1", "w", ['{"a":1}']),
    { type: "finish", reason: "tool_calls" },
  ];
  const { chunks } = render(each(events));
  assertStreamContract(chunks, "gw-model");
  const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  assert.deepEqual(calls.map((c: { index: number }) => c.index), [0, 0]);
});

Deno.test("reasoning: reasoning_content deltas, the signed block whole at its end", () => {
  const events: CanonicalEvent[] = [
    { type: "start" },
    { type: "block_start", index: 0, block: { type: "reasoning", style: "anthropic" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Let me " } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "think." } },
    { type: "block_delta", index: 0, delta: { type: "signature", signature: "sig" } },
    { type: "block_delta", index: 0, delta: { type: "signature", signature: "-1" } },
    { type: "block_stop", index: 0 },
    {
      type: "block_start",
      index: 1,
      block: { type: "reasoning", redacted: "opaque", style: "anthropic" },
    },
    { type: "block_stop", index: 1 },
    { type: "block_start", index: 2, block: { type: "text" } },
    { type: "block_delta", index: 2, delta: { type: "text", text: "Yes." } },
    { type: "block_stop", index: 2 },
    { type: "finish", reason: "stop" },
  ];
  const { chunks } = render(each(events));
  assertStreamContract(chunks, "gw-model");
  assert.deepEqual(chunks.slice(0, -2).map((c) => c.choices[0].delta), [
    { role: "assistant", content: "" },
    { reasoning_content: "Let me " },
    { reasoning_content: "think." },
    { thinking_blocks: [{ type: "thinking", thinking: "Let me think.", signature: "sig-1" }] },
    { thinking_blocks: [{ type: "redacted_thinking", data: "opaque" }] },
    { content: "Yes." },
  ]);
  const hidden = render(each(events), { excludeReasoning: true }).chunks;
  assert.deepEqual(hidden.slice(0, -2).map((c) => c.choices[0].delta), [
    { role: "assistant", content: "" },
    { content: "Yes." },
  ]);
});

Deno.test("refusals stream as delta.refusal; content_filter finishes", () => {
  const events: CanonicalEvent[] = [
    { type: "start" },
    { type: "block_start", index: 0, block: { type: "refusal" } },
    { type: "block_delta", index: 0, delta: { type: "refusal", text: "I can't " } },
    { type: "block_delta", index: 0, delta: { type: "refusal", text: "help." } },
    { type: "block_stop", index: 0 },
    { type: "finish", reason: "content_filter", detail: "refusal" },
  ];
  const { chunks } = render([events]);
  assertStreamContract(chunks, "gw-model");
  assert.deepEqual(chunks.slice(1, 3).map((c) => c.choices[0].delta.refusal), [
    "I can't ",
    "help.",
  ]);
  assert.deepEqual(chunks.at(-2).choices[0], {
    index: 0,
    delta: {},
    logprobs: null,
    finish_reason: "content_filter",
    stop_reason: "refusal",
  });
});

Deno.test("logprobs come on the chunk of their text or refusal, as OpenAI streams them", () => {
  const lp = (token: string) => ({ token, logprob: -0.25, bytes: [104], top_logprobs: [] });
  const events: CanonicalEvent[] = [
    { type: "start", extras: { protocol: "openai_chat", fields: { system_fingerprint: "fp_1" } } },
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "Hi", logprobs: [lp("Hi")] } },
    { type: "block_delta", index: 0, delta: { type: "text", text: " you" } },
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "refusal" } },
    {
      type: "block_delta",
      index: 1,
      delta: { type: "refusal", text: "No.", logprobs: [lp("No"), lp(".")] },
    },
    { type: "block_stop", index: 1 },
    { type: "finish", reason: "stop" },
  ];
  const { chunks } = render([events]);
  assertStreamContract(chunks, "gw-model");
  assert.deepEqual(chunks.slice(0, -1).map((c) => [c.choices[0].delta, c.choices[0].logprobs]), [
    [{ role: "assistant", content: "" }, null],
    [{ content: "Hi" }, { content: [lp("Hi")], refusal: null }],
    [{ content: " you" }, null],
    [{ refusal: "No." }, { content: null, refusal: [lp("No"), lp(".")] }],
    [{}, null],
  ]);
  assert.ok(chunks.every((c) => c.system_fingerprint === "fp_1"), "the extras on every chunk");
  assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
});

Deno.test("a paused turn finishes with length and stop_reason pause_turn", () => {
  const { chunks } = render([textEvents(["partial"], { input: 1, output: 1 }, "pause")]);
  assert.deepEqual(chunks.at(-2).choices[0], {
    index: 0,
    delta: {},
    logprobs: null,
    finish_reason: "length",
    stop_reason: "pause_turn",
  });
});

Deno.test("an empty answer still sends the role before the finish", () => {
  const { chunks } = render([[{ type: "start" }, { type: "finish", reason: "stop" }]]);
  assertStreamContract(chunks, "gw-model");
  assert.equal(chunks.at(-1).usage.total_tokens, 0);
});

Deno.test("usage details, and the last usage event counts", () => {
  const events = textEvents(["x"], { input: 1, output: 1 });
  events.splice(-1, 0, {
    type: "usage",
    usage: { input: 50, output: 7, cachedInput: 40, reasoning: 3 },
  });
  const { chunks } = render([events]);
  assert.deepEqual(chunks.at(-1).usage, {
    prompt_tokens: 50,
    completion_tokens: 7,
    total_tokens: 57,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 3 },
  });
});

Deno.test("openai_chat extras: top-level fields on every chunk, the last choice's and usage details merged", () => {
  const events = textEvents(["x"]);
  events[0] = {
    type: "start",
    id: "chatcmpl-up",
    extras: { protocol: "openai_chat", fields: { system_fingerprint: "fp_1", model: "up-model" } },
  };
  events[events.length - 1] = {
    type: "finish",
    reason: "stop",
    extras: {
      protocol: "openai_chat",
      fields: {
        service_tier: "default",
        usage: { prompt_tokens_details: { audio_tokens: 0 } },
        choices: [{
          logprobs: { content: [{ token: "x", logprob: -0.5 }] },
          delta: { annotations: [{ type: "url_citation" }] },
        }],
      },
    },
  };
  const { chunks } = render([events]);
  assertStreamContract(chunks, "gw-model");
  assert.ok(chunks.every((c) => c.system_fingerprint === "fp_1"));
  assert.deepEqual(chunks.at(-3).choices[0].delta, { annotations: [{ type: "url_citation" }] });
  assert.deepEqual(chunks.at(-2).choices[0].logprobs, {
    content: [{ token: "x", logprob: -0.5 }],
  });
  assert.deepEqual(Object.keys(chunks[0]), [
    "id",
    "object",
    "created",
    "model",
    "system_fingerprint",
    "choices",
    "usage",
  ]);
  assert.equal(chunks.at(-2).service_tier, "default");
  assert.deepEqual(chunks.at(-1).usage.prompt_tokens_details, { audio_tokens: 0 });
});

Deno.test("errors render as events (a stream that ends without finishing: tests/http/sse_response_test.ts)", () => {
  const renderer = new ChatChunkRenderer(HEAD);
  renderer.render(textEvents(["a"]).slice(0, 3));
  const error = new ApiError(502, "upstream_error", "lost", { code: "upstream_error" });
  assert.deepEqual(datas(renderer.error(error)).map((d) => JSON.parse(d)), [error.toBody()]);
});

Deno.test("a text chunk is the same text as its chunk object serialised, whatever its content, extras and usage", () => {
  const texts = [
    "plain",
    'quo"tes\\ and \n new lines',
    "\u0000switchyard-text\u0000",
    "émoji 🎉 \u2028",
  ];
  for (const includeUsage of [true, false]) {
    const events = textEvents(texts);
    events[0] = {
      type: "start",
      id: "chatcmpl-up",
      // An upstream field holding the template's own marker must not confuse it.
      extras: {
        protocol: "openai_chat",
        fields: { system_fingerprint: "fp_\u0000switchyard-text\u0000", service_tier: null },
      },
    };
    const renderer = new ChatChunkRenderer({ ...HEAD, includeUsage });
    const payloads = events.flatMap((e) => datas(renderer.render([e])));
    const content = payloads.map((p) => JSON.parse(p)).filter((c) => c.choices[0]?.delta.content);
    assert.deepEqual(content.map((c) => c.choices[0].delta.content), texts);
    for (const chunk of content) {
      const expected: Record<string, unknown> = {
        id: "chatcmpl-up",
        object: "chat.completion.chunk",
        created: HEAD.created,
        model: "gw-model",
        system_fingerprint: "fp_\u0000switchyard-text\u0000",
        service_tier: null,
        choices: [{
          index: 0,
          delta: { content: chunk.choices[0].delta.content },
          logprobs: null,
          finish_reason: null,
        }],
      };
      if (includeUsage) expected.usage = null;
      const raw = payloads.find((p) => JSON.stringify(JSON.parse(p)) === JSON.stringify(chunk))!;
      assert.equal(raw, JSON.stringify(expected), "byte for byte");
    }
  }
});
