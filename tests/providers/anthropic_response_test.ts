import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { finishReasonOf, fromAnthropicMessage } from "../../src/providers/anthropic_response.ts";
import type { MessagesResponse } from "../../src/types/anthropic.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

/** A recorded-style Messages API response with text, thinking and two tool_use blocks. */
const RESPONSE: MessagesResponse = {
  id: "msg_01XFDUDYJgAACzvnptvVoYEL",
  type: "message",
  role: "assistant",
  model: "claude-haiku-4-5-20251001",
  content: [
    { type: "thinking", thinking: "The user wants weather.", signature: "EqQB…" },
    { type: "text", text: "I'll check " },
    { type: "text", text: "both cities." },
    {
      type: "tool_use",
      id: "toolu_01A09q90qw90lq917835lq9",
      name: "get_weather",
      input: { city: "Paris" },
    },
    { type: "tool_use", id: "toolu_01B", name: "get_weather", input: { city: "Tokyo" } },
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

Deno.test("fromAnthropicMessage: text joined, tool_use as tool calls, usage with cache tokens", () => {
  assert.deepEqual(fromAnthropicMessage(RESPONSE, "claude-gw", NOW), {
    id: "chatcmpl-01XFDUDYJgAACzvnptvVoYEL",
    object: "chat.completion",
    created: NOW / 1000,
    model: "claude-gw",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: "I'll check both cities.",
        refusal: null,
        tool_calls: [
          {
            id: "toolu_01A09q90qw90lq917835lq9",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          {
            id: "toolu_01B",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Tokyo"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    }],
    usage: { prompt_tokens: 390, completion_tokens: 65, total_tokens: 455 },
  });
});

Deno.test("fromAnthropicMessage: only tool calls → content null; nothing at all → empty string", () => {
  const tools = fromAnthropicMessage(
    { ...RESPONSE, content: RESPONSE.content.slice(3) },
    "m",
    NOW,
  );
  assert.equal(tools.choices[0]!.message.content, null);
  const empty = fromAnthropicMessage(
    { ...RESPONSE, content: [], stop_reason: "end_turn" },
    "m",
    NOW,
  );
  assert.equal(empty.choices[0]!.message.content, "");
  assert.equal("tool_calls" in empty.choices[0]!.message, false);
});

Deno.test("finishReasonOf maps every stop_reason", () => {
  assert.deepEqual(
    [
      "end_turn",
      "stop_sequence",
      "max_tokens",
      "tool_use",
      "refusal",
      "pause_turn",
      "model_context_window_exceeded",
      null,
    ].map(finishReasonOf),
    ["stop", "stop", "length", "tool_calls", "content_filter", "stop", "length", "stop"],
  );
});

Deno.test("fromAnthropicMessage: a malformed answer is a 502", () => {
  for (const bad of [null, [], { id: "msg_1" }, { content: [] }, { id: "m", content: [1] }]) {
    assert.throws(
      () => fromAnthropicMessage(bad, "m", NOW),
      (e) => e instanceof ApiError && e.status === 502 && e.code === "upstream_error",
    );
  }
});
