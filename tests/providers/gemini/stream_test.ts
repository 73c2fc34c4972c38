import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { canonicalCallId } from "../../../src/providers/gemini/call_ids.ts";
import { fromGeminiResponse } from "../../../src/providers/gemini/response.ts";
import { GeminiStreamTranslator } from "../../../src/providers/gemini/stream.ts";
import { assembleEvents } from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";

type Obj = Record<string, unknown>;

const chunk = (parts: unknown[], last: Obj = {}): Obj => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...last }],
  usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
  responseId: "resp2",
});

function translate(chunks: Obj[]): CanonicalEvent[] {
  const translator = new GeminiStreamTranslator("req_1");
  const out: CanonicalEvent[] = [];
  for (const c of chunks) translator.push(c, out);
  return [...out, ...translator.end()];
}

const FINAL = {
  finishReason: "STOP",
};
const USAGE = {
  promptTokenCount: 4,
  candidatesTokenCount: 3,
  thoughtsTokenCount: 2,
  totalTokenCount: 9,
};

Deno.test("gemini stream: pieces append to their block; the finish and usage come at the end", () => {
  const events = translate([
    chunk([{ text: "Hmm", thought: true }]),
    chunk([{ text: ", yes.", thought: true }]),
    chunk([{ text: "One " }]),
    chunk([{ text: "two" }]),
    { ...chunk([{ text: "", thoughtSignature: "c2ln" }], FINAL), usageMetadata: USAGE },
  ]);
  assert.deepEqual(events[0], { type: "start", id: "resp2" });
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [
    { type: "reasoning", text: "Hmm, yes.", style: "gemini" },
    { type: "text", text: "One two" },
    { type: "reasoning", text: "", style: "gemini", signature: "c2ln" },
  ]);
  assert.equal(got.finish, "stop");
  assert.deepEqual(got.usage, { input: 4, output: 5, reasoning: 2 });
  assert.equal(events.filter((e) => e.type === "usage").length, 1, "usage only at the end");
});

Deno.test("gemini stream: calls arrive whole, in separate frames, each its own block", () => {
  const events = translate([
    chunk([{ text: "Checking." }]),
    chunk([{ functionCall: { name: "f", args: { city: "Oslo" } }, thoughtSignature: "c2ln" }]),
    chunk([{ functionCall: { name: "f", args: { city: "Rome" } } }], FINAL),
  ]);
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [
    { type: "text", text: "Checking." },
    {
      type: "tool_call",
      id: canonicalCallId("swy_resp2_0", "c2ln"),
      name: "f",
      arguments: '{"city":"Oslo"}',
    },
    { type: "tool_call", id: "swy_resp2_1", name: "f", arguments: '{"city":"Rome"}' },
  ]);
  assert.equal(got.finish, "tool_calls");
});

Deno.test("gemini stream: the same answer streamed or whole gives the same parts", () => {
  const parts = [
    { text: "Plan", thought: true, thoughtSignature: "dA==" },
    { text: "Answer", thoughtSignature: "dHg=" },
    { functionCall: { id: "call_1", name: "f", args: {} }, thoughtSignature: "Yw==" },
  ];
  const whole = fromGeminiResponse(chunk(parts, FINAL), "req_1");
  const streamed = assembleEvents(translate(parts.map((p, i) => chunk([p], i === 2 ? FINAL : {}))));
  assert.deepEqual(streamed.parts, whole.parts);
  assert.equal(streamed.finish, whole.finish);
});

Deno.test("gemini stream: a blocked prompt ends with content_filter; no finish reason is a 502", async () => {
  const blocked = assembleEvents(translate([{ promptFeedback: { blockReason: "SAFETY" } }]));
  assert.deepEqual([blocked.finish, blocked.detail], ["content_filter", "SAFETY"]);
  const safety = assembleEvents(translate([chunk([{ text: "Once" }], { finishReason: "SAFETY" })]));
  assert.deepEqual([safety.finish, safety.detail], ["content_filter", "SAFETY"]);
  for (const chunks of [[], [chunk([{ text: "cut" }])]]) {
    const error = await gatewayError(() => translate(chunks));
    assert.equal(error.status, 502);
    assert.match(error.message, /ended before a finishReason/);
  }
});
