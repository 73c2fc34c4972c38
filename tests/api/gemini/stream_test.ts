import assert from "node:assert/strict";
import { type GeminiFraming, GeminiStreamRenderer } from "../../../src/api/gemini/stream.ts";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { upstreamError } from "../../../src/errors.ts";

const decoder = new TextDecoder();

function renderer(framing: GeminiFraming, includeThoughts = false) {
  return new GeminiStreamRenderer({
    model: "gw-model",
    requestId: "req_abc",
    includeThoughts,
    framing,
    estimate: 11,
  });
}

/** The text of every batch rendered, and the end. */
function run(batches: CanonicalEvent[][], framing: GeminiFraming, includeThoughts = false) {
  const r = renderer(framing, includeThoughts);
  let text = "";
  for (const batch of batches) {
    const bytes = r.render(batch);
    if (bytes) text += decoder.decode(bytes);
  }
  return text + decoder.decode(r.end());
}

const TEXT: CanonicalEvent[][] = [
  [{ type: "start", id: "resp_1" }, { type: "block_start", index: 0, block: { type: "text" } }],
  [
    { type: "block_delta", index: 0, delta: { type: "text", text: "Hel" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "lo" } },
  ],
  [
    { type: "block_stop", index: 0 },
    { type: "usage", usage: { input: 5, output: 2 } },
    { type: "finish", reason: "stop" },
  ],
];

Deno.test("GeminiStreamRenderer: SSE frames as Gemini writes them, finish and usage last", () => {
  const text = run(TEXT, "sse");
  const frames = text.split("\r\n\r\n");
  assert.equal(frames.pop(), "", "ends with a blank line, no end marker");
  assert.deepEqual(frames.map((f) => JSON.parse(f.replace(/^data: /, ""))), [
    {
      candidates: [{ content: { role: "model", parts: [{ text: "Hello" }] }, index: 0 }],
      usageMetadata: { promptTokenCount: 11, totalTokenCount: 11 },
      modelVersion: "gw-model",
      responseId: "resp_1",
    },
    {
      candidates: [{
        content: { role: "model", parts: [{ text: "" }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: {
        promptTokenCount: 5,
        candidatesTokenCount: 2,
        totalTokenCount: 7,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: 5 }],
      },
      modelVersion: "gw-model",
      responseId: "resp_1",
    },
  ]);
});

Deno.test("GeminiStreamRenderer: without alt=sse, one JSON array", () => {
  const text = run(TEXT, "json_array");
  assert.match(text, /^\[\{/);
  assert.match(text, /\}\]$/);
  const chunks = JSON.parse(text);
  assert.equal(chunks.length, 2);
  assert.equal(chunks[1].candidates[0].finishReason, "STOP");
});

Deno.test("GeminiStreamRenderer: a function call whole at its end; thoughts shown when asked; Gemini's signature kept", () => {
  const batches: CanonicalEvent[][] = [
    [
      { type: "start" },
      { type: "block_start", index: 0, block: { type: "reasoning", style: "gemini" } },
      { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Thinking" } },
      { type: "block_delta", index: 0, delta: { type: "signature", signature: "c2ln" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "c1", name: "f" } },
      { type: "block_delta", index: 1, delta: { type: "arguments", json: '{"a":' } },
    ],
    [
      { type: "block_delta", index: 1, delta: { type: "arguments", json: "1}" } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "tool_calls" },
    ],
  ];
  const shown = JSON.parse(run(batches, "json_array", true));
  assert.deepEqual(shown[0].candidates[0].content.parts, [
    { text: "Thinking", thought: true, thoughtSignature: "c2ln" },
  ]);
  assert.deepEqual(shown[1].candidates[0].content.parts, [
    { functionCall: { id: "c1", name: "f", args: { a: 1 } } },
  ]);
  assert.equal(shown[1].candidates[0].finishReason, "STOP");
  const hidden = JSON.parse(run(batches, "json_array", false));
  assert.deepEqual(hidden[0].candidates[0].content.parts, [{ text: "", thoughtSignature: "c2ln" }]);
});

Deno.test("GeminiStreamRenderer: a failure after the start is Google's error chunk", () => {
  const sse = renderer("sse");
  sse.render(TEXT[0]!);
  sse.render(TEXT[1]!);
  const error = decoder.decode(sse.error(upstreamError("The upstream failed.")));
  assert.equal(
    error,
    'data: {"error":{"code":502,"message":"The upstream failed.","status":"UNAVAILABLE"}}\r\n\r\n',
  );
  const array = renderer("json_array");
  let text = decoder.decode(array.render(TEXT[0]!) ?? new Uint8Array());
  text += decoder.decode(array.render(TEXT[1]!)!);
  text += decoder.decode(array.error(upstreamError("The upstream failed.")));
  const chunks = JSON.parse(text);
  assert.equal(chunks.at(-1).error.status, "UNAVAILABLE");
});
