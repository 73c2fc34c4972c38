import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { fromConverseResponse } from "../../../src/providers/bedrock/response.ts";
import { mapConverseStopReason } from "../../../src/providers/bedrock/stop_reason.ts";
import { fromConverseUsage } from "../../../src/providers/bedrock/usage.ts";

Deno.test("bedrock response: reasoning, text and tool calls in order, usage with the cache inside the input", () => {
  const result = fromConverseResponse({
    output: {
      message: {
        role: "assistant",
        content: [
          { reasoningContent: { reasoningText: { text: "Hmm.", signature: "c2ln" } } },
          { reasoningContent: { redactedContent: "UkVE" } },
          { text: "Calling." },
          { toolUse: { toolUseId: "tooluse_1", name: "w", input: { city: "Paris" } } },
          { citationsContent: {} },
        ],
      },
    },
    stopReason: "tool_use",
    usage: {
      inputTokens: 10,
      outputTokens: 20,
      totalTokens: 130,
      cacheReadInputTokens: 100,
      cacheWriteInputTokens: 0,
    },
    metrics: { latencyMs: 5 },
  }, null);
  assert.deepEqual(result, {
    parts: [
      { type: "reasoning", text: "Hmm.", signature: "c2ln", style: "anthropic" },
      { type: "reasoning", text: "", redacted: "UkVE", style: "anthropic" },
      { type: "text", text: "Calling." },
      { type: "tool_call", id: "tooluse_1", name: "w", arguments: '{"city":"Paris"}' },
    ],
    finish: "tool_calls",
    usage: { input: 110, output: 20, cachedInput: 100, cacheWrite: 0 },
  });
});

Deno.test("bedrock response: stop reasons map to finishes, the unusual ones kept as detail", () => {
  assert.deepEqual(mapConverseStopReason("end_turn", false), { finish: "stop" });
  assert.deepEqual(mapConverseStopReason("stop_sequence", false), { finish: "stop" });
  assert.deepEqual(mapConverseStopReason("max_tokens", false), { finish: "length" });
  assert.deepEqual(mapConverseStopReason("tool_use", true), { finish: "tool_calls" });
  assert.deepEqual(mapConverseStopReason("guardrail_intervened", false), {
    finish: "content_filter",
    detail: "guardrail_intervened",
  });
  assert.deepEqual(mapConverseStopReason("content_filtered", false), {
    finish: "content_filter",
    detail: "content_filtered",
  });
  assert.deepEqual(mapConverseStopReason("model_context_window_exceeded", false), {
    finish: "length",
    detail: "model_context_window_exceeded",
  });
  assert.deepEqual(mapConverseStopReason("malformed_tool_use", false), {
    finish: "stop",
    detail: "malformed_tool_use",
  });
  assert.deepEqual(fromConverseUsage({ inputTokens: 3, outputTokens: 4 }), { input: 3, output: 4 });
});

Deno.test("bedrock response: an answer without output.message is a 502", () => {
  for (const body of [{}, { output: {} }, { output: { message: { content: "x" } } }, "text"]) {
    assert.throws(
      () => fromConverseResponse(body, null),
      (e) => e instanceof ApiError && e.status === 502,
    );
  }
});

Deno.test("bedrock response: the forced JSON tool's call is the answer's text", () => {
  const result = fromConverseResponse({
    output: {
      message: {
        role: "assistant",
        content: [{ toolUse: { toolUseId: "t", name: "json_output", input: { name: "Ada" } } }],
      },
    },
    stopReason: "tool_use",
    usage: { inputTokens: 1, outputTokens: 2 },
  }, "json_output");
  assert.deepEqual(result.parts, [{ type: "text", text: '{"name":"Ada"}' }]);
  assert.equal(result.finish, "stop");
});

Deno.test("bedrock response: with a document's citations on, the cited text is kept as text", () => {
  const result = fromConverseResponse({
    output: {
      message: {
        role: "assistant",
        content: [
          { text: "The report says " },
          {
            citationsContent: {
              content: [{ text: "revenue grew 12%" }],
              citations: [{ title: "q3", sourceContent: [{ text: "Revenue grew 12%." }] }],
            },
          },
          { text: "." },
        ],
      },
    },
    stopReason: "end_turn",
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  }, null);
  assert.deepEqual(result.parts, [
    { type: "text", text: "The report says " },
    { type: "text", text: "revenue grew 12%" },
    { type: "text", text: "." },
  ]);
});
