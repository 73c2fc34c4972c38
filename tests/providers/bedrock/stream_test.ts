import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ApiError } from "../../../src/errors.ts";
import { ConverseStreamTranslator } from "../../../src/providers/bedrock/stream.ts";

function run(
  events: [string, Record<string, unknown>][],
): { out: CanonicalEvent[]; ended: boolean } {
  const translator = new ConverseStreamTranslator(null);
  const out: CanonicalEvent[] = [];
  let ended = false;
  for (const [type, data] of events) ended = translator.push(type, data, out) || ended;
  return { out, ended };
}

Deno.test("bedrock stream: reasoning, text and a tool call become canonical blocks; metadata ends with usage", () => {
  const { out, ended } = run([
    ["initial-response", {}],
    ["messageStart", { role: "assistant", p: "abc" }],
    ["contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Hmm" } } }],
    ["contentBlockDelta", {
      contentBlockIndex: 0,
      delta: { reasoningContent: { signature: "c2ln" } },
    }],
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["contentBlockDelta", { contentBlockIndex: 1, delta: { text: "Hi" } }],
    ["contentBlockStop", { contentBlockIndex: 1 }],
    ["contentBlockStart", {
      contentBlockIndex: 2,
      start: { toolUse: { toolUseId: "t1", name: "w" } },
    }],
    ["contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: '{"a":' } } }],
    ["contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "1}" } } }],
    ["contentBlockStop", { contentBlockIndex: 2 }],
    ["messageStop", { stopReason: "tool_use" }],
    ["metadata", {
      usage: { inputTokens: 5, outputTokens: 7, cacheReadInputTokens: 2 },
      metrics: { latencyMs: 1 },
    }],
  ]);
  assert.ok(ended);
  assert.deepEqual(out, [
    { type: "start" },
    { type: "block_start", index: 0, block: { type: "reasoning", style: "anthropic" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Hmm" } },
    { type: "block_delta", index: 0, delta: { type: "signature", signature: "c2ln" } },
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "text" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: "Hi" } },
    { type: "block_stop", index: 1 },
    { type: "block_start", index: 2, block: { type: "tool_call", id: "t1", name: "w" } },
    { type: "block_delta", index: 2, delta: { type: "arguments", json: '{"a":' } },
    { type: "block_delta", index: 2, delta: { type: "arguments", json: "1}" } },
    { type: "block_stop", index: 2 },
    { type: "usage", usage: { input: 7, output: 7, cachedInput: 2 } },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("bedrock stream: redacted reasoning opens its own block; a tool call without input gets {}", () => {
  const { out } = run([
    ["messageStart", { role: "assistant" }],
    ["contentBlockDelta", {
      contentBlockIndex: 0,
      delta: { reasoningContent: { redactedContent: "UkVE" } },
    }],
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["contentBlockStart", {
      contentBlockIndex: 1,
      start: { toolUse: { toolUseId: "t1", name: "w" } },
    }],
    ["contentBlockStop", { contentBlockIndex: 1 }],
    ["messageStop", { stopReason: "tool_use" }],
  ]);
  assert.deepEqual(out.slice(1, 3), [
    {
      type: "block_start",
      index: 0,
      block: { type: "reasoning", redacted: "UkVE", style: "anthropic" },
    },
    { type: "block_stop", index: 0 },
  ]);
  assert.deepEqual(out.slice(4), [
    { type: "block_delta", index: 1, delta: { type: "arguments", json: "{}" } },
    { type: "block_stop", index: 1 },
  ]);
});

Deno.test("bedrock stream: a body ending after messageStop finishes; before it, or out of order, is a 502", () => {
  const translator = new ConverseStreamTranslator(null);
  const out: CanonicalEvent[] = [];
  translator.push("messageStart", {}, out);
  translator.push("messageStop", { stopReason: "max_tokens" }, out);
  assert.deepEqual(translator.end(), [{ type: "finish", reason: "length" }]);

  const cut = new ConverseStreamTranslator(null);
  cut.push("messageStart", {}, []);
  assert.throws(() => cut.end(), (e) => e instanceof ApiError && e.status === 502);
  assert.throws(
    () => run([["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } }]]),
    /before messageStart/,
  );
  assert.throws(
    () =>
      run([["messageStart", {}], ["contentBlockDelta", {
        contentBlockIndex: 0,
        delta: { toolUse: { input: "{" } },
      }]]),
    /toolUse input outside a toolUse/,
  );
});

Deno.test("bedrock stream: the forced JSON tool streams as text and finishes as stop", () => {
  const translator = new ConverseStreamTranslator("json_output");
  const out: CanonicalEvent[] = [];
  const events: [string, Record<string, unknown>][] = [
    ["messageStart", {}],
    ["contentBlockStart", {
      contentBlockIndex: 0,
      start: { toolUse: { toolUseId: "t", name: "json_output" } },
    }],
    ["contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: '{"name":' } } }],
    ["contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: '"Ada"}' } } }],
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["messageStop", { stopReason: "tool_use" }],
  ];
  for (const [type, data] of events) translator.push(type, data, out);
  out.push(...translator.end());
  assert.deepEqual(out.slice(1), [
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: '{"name":' } },
    { type: "block_delta", index: 0, delta: { type: "text", text: '"Ada"}' } },
    { type: "block_stop", index: 0 },
    { type: "finish", reason: "stop" },
  ]);
});
