import assert from "node:assert/strict";
import { canonicalCallId } from "../../../src/providers/gemini/call_ids.ts";
import { mapGeminiFinish } from "../../../src/providers/gemini/finish.ts";
import { fromGeminiResponse } from "../../../src/providers/gemini/response.ts";
import { fromGeminiUsage } from "../../../src/providers/gemini/usage.ts";
import { gatewayError } from "../../support/rejection.ts";

const answer = (parts: unknown[], finishReason = "STOP", extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
  usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
  modelVersion: "gemini-3-flash",
  responseId: "resp1",
  ...extra,
});

Deno.test("gemini response: thoughts, text and signatures in order", () => {
  const result = fromGeminiResponse(
    answer([
      { text: "Let me think", thought: true },
      { text: " more.", thought: true, thoughtSignature: "dGg=" },
      { text: "Hello " },
      { text: "world", thoughtSignature: "dHg=" },
      { executableCode: { language: "PYTHON", code: "1" } },
    ]),
    "req_1",
  );
  assert.equal(result.id, "resp1");
  assert.deepEqual(result.parts, [
    { type: "reasoning", text: "Let me think more.", style: "gemini", signature: "dGg=" },
    { type: "text", text: "Hello world" },
    { type: "reasoning", text: "", style: "gemini", signature: "dHg=" },
  ]);
  assert.equal(result.finish, "stop");
  assert.deepEqual(result.usage, { input: 10, output: 5 });
});

Deno.test("gemini response: parallel calls, with Gemini's ids or with ids made from the answer's", () => {
  const calls = [
    { functionCall: { id: "call_7", name: "f", args: { a: 1 } }, thoughtSignature: "c2ln" },
    { functionCall: { id: "call_8", name: "f", args: {} } },
  ];
  const result = fromGeminiResponse(answer(calls), "req_1");
  assert.equal(result.finish, "tool_calls");
  assert.deepEqual(result.parts, [
    { type: "tool_call", id: canonicalCallId("call_7", "c2ln"), name: "f", arguments: '{"a":1}' },
    { type: "tool_call", id: "call_8", name: "f", arguments: "{}" },
  ]);
  const bare = calls.map(({ functionCall: { name, args } }) => ({ functionCall: { name, args } }));
  const made = fromGeminiResponse(answer(bare, "STOP", { responseId: undefined }), "req_9");
  assert.deepEqual(made.parts.map((p) => p.type === "tool_call" && p.id), [
    "swy_req9_0",
    "swy_req9_1",
  ]);
});

Deno.test("gemini response: a blocked prompt is an empty content_filter answer", () => {
  const result = fromGeminiResponse({
    promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
    usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
    responseId: "r",
  }, "req");
  assert.deepEqual(result.parts, []);
  assert.equal(result.finish, "content_filter");
  assert.equal(result.stopDetail, "PROHIBITED_CONTENT");
  assert.deepEqual(result.usage, { input: 7, output: 0 });
});

Deno.test("gemini response: an answer of the wrong shape is a 502", async () => {
  for (
    const data of [
      [],
      { candidates: "x" },
      answer([{ functionCall: { args: {} } }]),
      answer([{ functionCall: { name: "f", args: [1] } }]),
      answer([{ functionCall: { name: "f", args: "not json" } }]),
      answer(["x"]),
      {},
    ]
  ) {
    const error = await gatewayError(() => fromGeminiResponse(data, "req"));
    assert.equal(error.status, 502);
    assert.match(error.message, /malformed/);
  }
});

Deno.test("gemini response: args sent as the JSON text of an object are read, not dropped", async () => {
  const result = await fromGeminiResponse(
    answer([{ functionCall: { name: "f", args: '{"city":"Oslo"}' } }]),
    "req",
  );
  assert.equal(result.parts.length, 1);
  const call = result.parts[0] as { type: string; arguments: string };
  assert.equal(call.type, "tool_call");
  assert.equal(call.arguments, '{"city":"Oslo"}');
});

Deno.test("gemini finish reasons: the canonical finish and the detail", () => {
  const rows: [unknown, boolean, unknown, string, string | undefined][] = [
    ["STOP", false, undefined, "stop", undefined],
    ["STOP", true, undefined, "tool_calls", undefined],
    [undefined, false, undefined, "stop", undefined],
    ["MAX_TOKENS", false, undefined, "length", undefined],
    ["SAFETY", false, undefined, "content_filter", "SAFETY"],
    ["RECITATION", false, undefined, "content_filter", "RECITATION"],
    ["PROHIBITED_CONTENT", false, undefined, "content_filter", "PROHIBITED_CONTENT"],
    ["SPII", false, undefined, "content_filter", "SPII"],
    ["BLOCKLIST", false, undefined, "content_filter", "BLOCKLIST"],
    ["MALFORMED_FUNCTION_CALL", false, undefined, "error", "MALFORMED_FUNCTION_CALL"],
    ["OTHER", false, undefined, "stop", "OTHER"],
    [undefined, false, "SAFETY", "content_filter", "SAFETY"],
  ];
  for (const [reason, called, blocked, finish, detail] of rows) {
    assert.deepEqual(
      mapGeminiFinish(reason, called, blocked),
      detail === undefined ? { finish } : { finish, detail },
      String(reason),
    );
  }
});

Deno.test("gemini usage: thoughts count as output and reasoning; cached content as cached input", () => {
  assert.deepEqual(
    fromGeminiUsage({
      promptTokenCount: 100,
      cachedContentTokenCount: 60,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 30,
      toolUsePromptTokenCount: 5,
      totalTokenCount: 155,
    }),
    { input: 105, output: 50, cachedInput: 60, reasoning: 30 },
  );
  assert.deepEqual(fromGeminiUsage(undefined), { input: 0, output: 0 });
});
