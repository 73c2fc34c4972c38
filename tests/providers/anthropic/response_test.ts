import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { fromAnthropicMessage } from "../../../src/providers/anthropic/response.ts";
import { mapAnthropicStopReason } from "../../../src/providers/anthropic/stop_reason.ts";
import { fromAnthropicUsage } from "../../../src/providers/anthropic/usage.ts";
import type { MessagesResponse } from "../../../src/types/anthropic.ts";

/** A recorded-style Messages API response with thinking, text and two tool_use blocks. */
const RESPONSE: MessagesResponse = {
  id: "msg_01XFDUDYJgAACzvnptvVoYEL",
  type: "message",
  role: "assistant",
  model: "claude-haiku-4-5-20251001",
  content: [
    { type: "thinking", thinking: "The user wants weather.", signature: "EqQBCgIYAhIM1gbcDa9" },
    { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
    { type: "text", text: "I'll check " },
    { type: "text", text: "both cities." },
    {
      type: "tool_use",
      id: "toolu_01A09q90qw90lq917835lq9",
      name: "get_weather",
      input: { city: "Paris" },
    },
    { type: "tool_use", id: "toolu_01B", name: "get_weather", input: { city: "Tokyo" } },
    { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: {
    input_tokens: 377,
    output_tokens: 65,
    cache_creation_input_tokens: 10,
    cache_read_input_tokens: 3,
  },
};

Deno.test("fromAnthropicMessage: every block in order, reasoning with its signature or data", () => {
  assert.deepEqual(fromAnthropicMessage(RESPONSE, null), {
    id: "msg_01XFDUDYJgAACzvnptvVoYEL",
    parts: [
      {
        type: "reasoning",
        text: "The user wants weather.",
        signature: "EqQBCgIYAhIM1gbcDa9",
        style: "anthropic",
      },
      { type: "reasoning", text: "", redacted: "EmwKAhgBEgy3va3pzix/LafPsn4a", style: "anthropic" },
      { type: "text", text: "I'll check " },
      { type: "text", text: "both cities." },
      {
        type: "tool_call",
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
      },
      { type: "tool_call", id: "toolu_01B", name: "get_weather", arguments: '{"city":"Tokyo"}' },
    ],
    finish: "tool_calls",
    usage: { input: 390, output: 65, cachedInput: 3, cacheWrite: 10 },
  });
});

Deno.test("fromAnthropicMessage: the forced JSON tool's input is the answer's text, finish stop", () => {
  const json = {
    ...RESPONSE,
    content: [{ type: "tool_use", id: "toolu_9", name: "json_output", input: { a: [1, 2] } }],
  };
  const result = fromAnthropicMessage(json, "json_output");
  assert.deepEqual(result.parts, [{ type: "text", text: '{"a":[1,2]}' }]);
  assert.equal(result.finish, "stop");
  // The same block without the JSON tool is a call.
  assert.equal(fromAnthropicMessage(json, null).finish, "tool_calls");
});

Deno.test("fromAnthropicMessage: refusal and pause_turn are never a plain stop; extras kept", () => {
  const refusal = fromAnthropicMessage({
    ...RESPONSE,
    content: [{ type: "text", text: "I can" }],
    stop_reason: "refusal",
    stop_details: { type: "refusal", category: "cyber", explanation: null },
  }, null);
  assert.equal(refusal.finish, "content_filter");
  assert.equal(refusal.stopDetail, "refusal");
  assert.deepEqual(refusal.extras, {
    protocol: "anthropic_messages",
    fields: { stop_details: { type: "refusal", category: "cyber", explanation: null } },
  });
  const paused = fromAnthropicMessage(
    { ...RESPONSE, content: [], stop_reason: "pause_turn" },
    null,
  );
  assert.equal(paused.finish, "pause");
  assert.equal(paused.stopDetail, "pause_turn");
  const sequence = fromAnthropicMessage(
    { ...RESPONSE, content: [], stop_reason: "stop_sequence", stop_sequence: "END" },
    null,
  );
  assert.equal(sequence.finish, "stop");
  assert.deepEqual(sequence.extras?.fields, { stop_sequence: "END" });
});

Deno.test("mapAnthropicStopReason maps every stop_reason", () => {
  assert.deepEqual(
    [
      "end_turn",
      "stop_sequence",
      "max_tokens",
      "tool_use",
      "refusal",
      "pause_turn",
      "model_context_window_exceeded",
      "something_new",
      null,
    ].map((reason) => mapAnthropicStopReason(reason, true)),
    [
      { finish: "stop" },
      { finish: "stop" },
      { finish: "length" },
      { finish: "tool_calls" },
      { finish: "content_filter", detail: "refusal" },
      { finish: "pause", detail: "pause_turn" },
      { finish: "length", detail: "model_context_window_exceeded" },
      { finish: "stop", detail: "something_new" },
      { finish: "stop" },
    ],
  );
  assert.deepEqual(mapAnthropicStopReason("tool_use", false), { finish: "stop" });
});

Deno.test("fromAnthropicUsage: input counts cache reads and writes; thinking tokens as reasoning", () => {
  assert.deepEqual(
    fromAnthropicUsage({
      input_tokens: 50,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 300,
      output_tokens: 80,
      output_tokens_details: { thinking_tokens: 60 },
      service_tier: "standard",
    }),
    { input: 2350, output: 80, cachedInput: 2000, cacheWrite: 300, reasoning: 60 },
  );
  assert.deepEqual(fromAnthropicUsage({ input_tokens: 5, output_tokens: 1 }), {
    input: 5,
    output: 1,
  });
  assert.deepEqual(fromAnthropicUsage(null), { input: 0, output: 0 });
});

Deno.test("fromAnthropicMessage: a malformed answer is a 502", () => {
  for (
    const bad of [
      null,
      [],
      { id: "msg_1" },
      { content: [] },
      { id: "m", content: [1] },
      { id: "m", content: [{ type: "tool_use", name: "f" }] },
      { id: "m", content: [{ type: "redacted_thinking" }] },
    ]
  ) {
    assert.throws(
      () => fromAnthropicMessage(bad, null),
      (e) => e instanceof ApiError && e.status === 502 && e.code === "upstream_error",
    );
  }
});
