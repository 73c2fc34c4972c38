import assert from "node:assert/strict";
import { renderGenerateContent } from "../../../src/api/gemini/response.ts";
import { toFinishReason } from "../../../src/api/gemini/finish.ts";
import { modelMethod } from "../../../src/api/gemini/method.ts";
import { fromGeminiSchema } from "../../../src/api/gemini/schema.ts";
import { ApiError } from "../../../src/errors.ts";

const HEAD = { model: "gw-model", requestId: "req_1", includeThoughts: true };

Deno.test("renderGenerateContent: one candidate with the parts, finish, usage and ids", () => {
  const body = renderGenerateContent({
    id: "up_1",
    parts: [
      { type: "reasoning", text: "Hmm", style: "anthropic", signature: "anthropic-sig" },
      { type: "text", text: "Calling." },
      { type: "reasoning", text: "", signature: "Z2VtaW5p", style: "gemini" },
      { type: "tool_call", id: "call_9", name: "f", arguments: '{"x":1}' },
    ],
    finish: "tool_calls",
    usage: { input: 10, output: 8, reasoning: 3, cachedInput: 4 },
  }, HEAD);
  assert.deepEqual(body, {
    candidates: [{
      content: {
        role: "model",
        parts: [
          { text: "Hmm", thought: true },
          { text: "Calling.", thoughtSignature: "Z2VtaW5p" },
          { functionCall: { id: "call_9", name: "f", args: { x: 1 } } },
        ],
      },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: {
      promptTokenCount: 10,
      candidatesTokenCount: 5,
      totalTokenCount: 18,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: 10 }],
      thoughtsTokenCount: 3,
      cachedContentTokenCount: 4,
    },
    modelVersion: "gw-model",
    responseId: "up_1",
  });
});

Deno.test("renderGenerateContent: thoughts hidden unless asked for; the request id without one", () => {
  const body = renderGenerateContent({
    parts: [{ type: "reasoning", text: "Hmm" }, { type: "text", text: "Hi" }],
    finish: "length",
    usage: { input: 1, output: 1 },
  }, { ...HEAD, includeThoughts: false });
  assert.deepEqual(body.candidates[0]!.content.parts, [{ text: "Hi" }]);
  assert.equal(body.candidates[0]!.finishReason, "MAX_TOKENS");
  assert.equal(body.responseId, "req_1");
});

Deno.test("toFinishReason: canonical finishes and Gemini's own details", () => {
  assert.equal(toFinishReason("stop"), "STOP");
  assert.equal(toFinishReason("tool_calls"), "STOP");
  assert.equal(toFinishReason("length"), "MAX_TOKENS");
  assert.equal(toFinishReason("content_filter"), "SAFETY");
  assert.equal(toFinishReason("content_filter", "RECITATION"), "RECITATION");
  assert.equal(toFinishReason("error", "MALFORMED_FUNCTION_CALL"), "MALFORMED_FUNCTION_CALL");
  assert.equal(toFinishReason("error"), "OTHER");
  assert.equal(toFinishReason("content_filter", "refusal"), "SAFETY");
});

Deno.test("modelMethod: the model and the method of a path segment", () => {
  assert.deepEqual(modelMethod("gemini-2.5-flash:generateContent"), {
    model: "gemini-2.5-flash",
    method: "generateContent",
  });
  assert.deepEqual(modelMethod("llama3:8b:countTokens"), {
    model: "llama3:8b",
    method: "countTokens",
  });
  for (const segment of ["sim-chat", "sim-chat:embedContent", ":generateContent"]) {
    assert.throws(() => modelMethod(segment), (e) => e instanceof ApiError && e.status === 404);
  }
});

Deno.test("fromGeminiSchema: Gemini's Schema as JSON Schema", () => {
  assert.deepEqual(
    fromGeminiSchema({
      type: "OBJECT",
      properties: {
        tags: { type: "ARRAY", items: { type: "STRING", enum: ["a", "b"] } },
        n: { type: "NUMBER", nullable: true, description: "N." },
      },
      required: ["tags"],
      propertyOrdering: ["tags", "n"],
      anyOf: [{ type: "OBJECT" }],
    }),
    {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
        n: { type: ["number", "null"], description: "N." },
      },
      required: ["tags"],
      anyOf: [{ type: "object" }],
    },
  );
});

Deno.test("ApiError.toGeminiBody: the status, its gRPC name and the field leading the message", () => {
  assert.deepEqual(new ApiError(429, "rate_limit_error", "Slow down.").toGeminiBody(), {
    error: { code: 429, message: "Slow down.", status: "RESOURCE_EXHAUSTED" },
  });
  assert.deepEqual(
    new ApiError(400, "invalid_request_error", "Bad.", { param: "contents[0]" }).toGeminiBody(),
    { error: { code: 400, message: "contents[0]: Bad.", status: "INVALID_ARGUMENT" } },
  );
  const status = (code: number) => new ApiError(code, "x", "m").toGeminiBody().error.status;
  assert.equal(status(504), "DEADLINE_EXCEEDED");
  assert.equal(status(403), "PERMISSION_DENIED");
  assert.equal(status(502), "UNAVAILABLE");
});
