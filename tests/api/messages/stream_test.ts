import assert from "node:assert/strict";
import { MessagesStreamRenderer } from "../../../src/api/messages/stream.ts";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ApiError } from "../../../src/errors.ts";
import { checkTranscript, parseTranscript } from "../../support/messages_stream.ts";

const decoder = new TextDecoder();

function renderer(estimate = 11) {
  return new MessagesStreamRenderer({ requestId: "req_abc", model: "gw-model", estimate });
}

/** The text of every batch rendered, and the end. */
function run(batches: CanonicalEvent[][], estimate?: number): string {
  const r = renderer(estimate);
  let text = "";
  for (const batch of batches) {
    const bytes = r.render(batch);
    if (bytes) text += decoder.decode(bytes);
  }
  return text + decoder.decode(r.end());
}

Deno.test("MessagesStreamRenderer: message_start takes the input usage reported with the start", () => {
  const t = checkTranscript(parseTranscript(run([
    [{ type: "start", id: "msg_up" }, {
      type: "usage",
      usage: { input: 40, output: 1, cachedInput: 30, cacheWrite: 4 },
    }],
    [{ type: "block_start", index: 0, block: { type: "text" } }, {
      type: "block_delta",
      index: 0,
      delta: { type: "text", text: "Hi" },
    }, { type: "block_stop", index: 0 }],
    [{ type: "usage", usage: { input: 40, output: 3, cachedInput: 30, cacheWrite: 4 } }, {
      type: "finish",
      reason: "stop",
    }],
  ])));
  assert.equal(t.message.id, "msg_up");
  assert.equal(t.message.model, "gw-model");
  assert.deepEqual(t.message.usage, {
    input_tokens: 6,
    output_tokens: 0,
    cache_creation_input_tokens: 4,
    cache_read_input_tokens: 30,
  });
  assert.equal(t.usage.output_tokens, 3);
  assert.equal(t.stopReason, "end_turn");
});

Deno.test("MessagesStreamRenderer: without usage before the content, message_start has the estimate and message_delta the real count", () => {
  const t = checkTranscript(parseTranscript(run([
    [{ type: "start" }],
    [{ type: "block_start", index: 0, block: { type: "text" } }],
    [{ type: "block_delta", index: 0, delta: { type: "text", text: "Hi" } }],
    [{ type: "block_stop", index: 0 }, { type: "usage", usage: { input: 9, output: 2 } }, {
      type: "finish",
      reason: "length",
    }],
  ], 12)));
  assert.equal((t.message.usage as { input_tokens: number }).input_tokens, 12);
  assert.equal(t.usage.input_tokens, 9);
  assert.equal(t.stopReason, "max_tokens");
  assert.match(t.message.id as string, /^msg_abc$/);
});

Deno.test("MessagesStreamRenderer: interleaved blocks are written one after the other, in order of opening", () => {
  const call = (index: number, id: string) => ({
    type: "block_start" as const,
    index,
    block: { type: "tool_call" as const, id, name: "f" },
  });
  const args = (index: number, json: string) => ({
    type: "block_delta" as const,
    index,
    delta: { type: "arguments" as const, json },
  });
  const t = checkTranscript(parseTranscript(run([
    [{ type: "start" }, call(0, "a"), call(1, "b")],
    [args(1, '{"x":'), args(0, '{"y":')],
    [args(0, "1}"), args(1, "2}")],
    [{ type: "block_stop", index: 1 }],
    [{ type: "block_stop", index: 0 }, { type: "finish", reason: "tool_calls" }],
  ])));
  assert.deepEqual(t.blocks.map((b) => [b.id, b.input]), [["a", { y: 1 }], ["b", { x: 2 }]]);
  assert.equal(t.stopReason, "tool_use");
});

Deno.test("MessagesStreamRenderer: unsigned reasoning is signed with its style; redacted reasoning is a redacted_thinking block", () => {
  const t = checkTranscript(parseTranscript(run([
    [{ type: "start" }, {
      type: "block_start",
      index: 0,
      block: { type: "reasoning", style: "openai" },
    }],
    [{ type: "block_delta", index: 0, delta: { type: "reasoning", text: "Hmm." } }],
    [{ type: "block_stop", index: 0 }, {
      type: "block_start",
      index: 1,
      block: { type: "reasoning", redacted: "opaque", style: "anthropic" },
    }, { type: "block_stop", index: 1 }],
    [
      { type: "block_start", index: 2, block: { type: "refusal" } },
      {
        type: "block_delta",
        index: 2,
        delta: { type: "refusal", text: "No." },
      },
      { type: "block_stop", index: 2 },
      {
        type: "finish",
        reason: "content_filter",
      },
    ],
  ])));
  assert.deepEqual(t.blocks, [
    { type: "thinking", thinking: "Hmm.", signature: "switchyard.reasoning.openai" },
    { type: "redacted_thinking", data: "opaque" },
    { type: "text", text: "No." },
  ]);
  assert.equal(t.stopReason, "refusal");
});

Deno.test("MessagesStreamRenderer: a failure is Anthropic's error event (a stream without its finish: tests/http/sse_response_test.ts)", () => {
  const r = renderer();
  r.render([{ type: "start" }]);
  const error = decoder.decode(r.error(new ApiError(529, "overloaded", "Busy.")));
  assert.equal(
    error,
    'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Busy."}}\n\n',
  );
});

/** A text answer that Gemini signed on its last text part (parts.ts), then `after`. */
function signedText(after: CanonicalEvent[][]): CanonicalEvent[][] {
  return [
    [{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }],
    [{ type: "block_delta", index: 0, delta: { type: "text", text: "The word is lantern." } }],
    [
      { type: "block_stop", index: 0 },
      {
        type: "block_start",
        index: 1,
        block: { type: "reasoning", style: "gemini" },
      },
      { type: "block_delta", index: 1, delta: { type: "signature", signature: "c2lnMQ==" } },
      {
        type: "block_stop",
        index: 1,
      },
    ],
    ...after,
  ];
}

Deno.test("MessagesStreamRenderer: a bare Gemini signature after the last text is left out, so the text is the message's last block", () => {
  const t = checkTranscript(parseTranscript(run(signedText([[
    { type: "usage", usage: { input: 5, output: 4 } },
    { type: "finish", reason: "stop" },
  ]]))));
  assert.deepEqual(t.blocks, [{ type: "text", text: "The word is lantern." }]);
  assert.equal(t.stopReason, "end_turn");
});

Deno.test("MessagesStreamRenderer: a bare Gemini signature followed by more blocks is sent in its place, in the gateway's mark", () => {
  const t = checkTranscript(parseTranscript(run(signedText([[
    { type: "block_start", index: 2, block: { type: "tool_call", id: "call_1", name: "read" } },
    { type: "block_delta", index: 2, delta: { type: "arguments", json: '{"p":1}' } },
    { type: "block_stop", index: 2 },
    { type: "finish", reason: "tool_calls" },
  ]]))));
  assert.deepEqual(t.blocks.map((b) => b.type), ["text", "thinking", "tool_use"]);
  assert.equal(t.blocks[1]!.signature, "switchyard.reasoning.gemini/c2lnMQ==");
  assert.equal(t.blocks[1]!.thinking, "");
  assert.deepEqual(t.blocks[2]!.input, { p: 1 });
});

Deno.test("MessagesStreamRenderer: a Gemini thought after text streams as it comes once it has text", () => {
  const t = checkTranscript(parseTranscript(run([
    [{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }],
    [{ type: "block_delta", index: 0, delta: { type: "text", text: "First." } }, {
      type: "block_stop",
      index: 0,
    }],
    [{ type: "block_start", index: 1, block: { type: "reasoning", style: "gemini" } }],
    [{ type: "block_delta", index: 1, delta: { type: "reasoning", text: "Then think." } }],
    [{ type: "block_delta", index: 1, delta: { type: "signature", signature: "s2" } }, {
      type: "block_stop",
      index: 1,
    }, { type: "finish", reason: "stop" }],
  ])));
  assert.deepEqual(t.blocks.map((b) => [b.type, b.thinking ?? b.text]), [
    ["text", "First."],
    ["thinking", "Then think."],
  ]);
  assert.equal(t.blocks[1]!.signature, "switchyard.reasoning.gemini/s2");
});
