import assert from "node:assert/strict";
import { BATCH_CHARS, replayEvents } from "../../src/cache/replay.ts";
import type { CanonicalResult } from "../../src/canonical/result.ts";
import { ResultCollector } from "../../src/canonical/result_collector.ts";

/** The result a stream of events adds up to. */
function collected(result: CanonicalResult): { result: CanonicalResult; batches: number } {
  const collector = new ResultCollector();
  let batches = 0;
  for (const batch of replayEvents(result)) {
    assert.ok(batch.length > 0);
    collector.add(batch);
    batches++;
  }
  const out: CanonicalResult = {
    parts: collector.parts,
    finish: collector.finish!,
    usage: collector.usage!,
  };
  if (collector.detail !== undefined) out.stopDetail = collector.detail;
  if (collector.extras !== undefined) out.extras = collector.extras;
  return { result: out, batches };
}

Deno.test("a replayed result streams back to itself: reasoning with signature, redacted reasoning, text, tool calls, usage, finish", () => {
  const result: CanonicalResult = {
    parts: [
      { type: "reasoning", text: "think", signature: "sig==", style: "anthropic" },
      { type: "reasoning", text: "", redacted: "opaque", style: "anthropic" },
      { type: "text", text: "Paris." },
      { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' },
      { type: "tool_call", id: "call_2", name: "g", arguments: "" },
    ],
    finish: "tool_calls",
    stopDetail: "tool_use",
    usage: { input: 10, output: 20, cachedInput: 4, reasoning: 5 },
    extras: { protocol: "openai_chat", fields: { system_fingerprint: "fp" } },
  };
  assert.deepEqual(collected(result).result, result);
});

Deno.test("the input usage comes before the blocks; the whole usage with the finish", () => {
  const batches = [...replayEvents({
    parts: [{ type: "text", text: "hi" }],
    finish: "stop",
    usage: { input: 3, output: 2, reasoning: 1 },
  })];
  const events = batches.flat();
  assert.deepEqual(events.slice(0, 2), [
    { type: "start" },
    { type: "usage", usage: { input: 3, output: 0 } },
  ]);
  assert.deepEqual(events.slice(-2), [
    { type: "usage", usage: { input: 3, output: 2, reasoning: 1 } },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("a long answer is replayed in batches of about BATCH_CHARS, not one write", () => {
  const text = "x".repeat(BATCH_CHARS * 5 + 7);
  const { result, batches } = collected({
    parts: [{ type: "text", text }],
    finish: "length",
    usage: { input: 1, output: 2 },
  });
  assert.equal((result.parts[0] as { text: string }).text, text);
  assert.ok(batches >= 6, `${batches} batches`);
});
