import assert from "node:assert/strict";
import { ApiError, invalidRequest, rateLimited, upstreamTimeout } from "../src/errors.ts";
import { errorResponse } from "../src/http/response.ts";
import { invalidType } from "../src/validation/error.ts";

Deno.test("errors: OpenAI's shape by default, with code and param", async () => {
  const response = errorResponse(invalidRequest("must be a string", "messages[0].content"));
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), {
    error: {
      message: "must be a string",
      type: "invalid_request_error",
      code: "invalid_value",
      param: "messages[0].content",
    },
  });
});

Deno.test("errors: Anthropic's shape names the field's dotted path and types by status", async () => {
  const response = errorResponse(
    invalidRequest("must be a string", "messages[0].content[2].text"),
    "anthropic",
    "req_1",
  );
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), {
    type: "error",
    error: {
      type: "invalid_request_error",
      message: "messages.0.content.2.text: must be a string",
    },
    request_id: "req_1",
  });
  const limited = errorResponse(rateLimited("slow down", { "retry-after": "3" }), "anthropic");
  assert.equal(limited.headers.get("retry-after"), "3");
  assert.equal((await limited.json()).error.type, "rate_limit_error");
  const types = [
    [new ApiError(401, "authentication_error", "x"), "authentication_error"],
    [new ApiError(403, "permission_error", "x"), "permission_error"],
    [new ApiError(404, "invalid_request_error", "x"), "not_found_error"],
    [new ApiError(413, "invalid_request_error", "x"), "request_too_large"],
    [new ApiError(502, "upstream_error", "x"), "api_error"],
    [new ApiError(503, "server_error", "x"), "overloaded_error"],
    [upstreamTimeout("x"), "timeout_error"],
  ] as const;
  for (const [error, type] of types) assert.equal(error.toAnthropicBody().error.type, type);
});

Deno.test("Anthropic's shape names a validation error's field once, before its reason", () => {
  const error = invalidType("messages[0].content", "a string or an array of content blocks", 3);
  assert.equal(
    error.message,
    "Invalid type for 'messages[0].content': expected a string or an array of content blocks, but got a number.",
  );
  assert.equal(
    error.toAnthropicBody().error.message,
    "messages.0.content: expected a string or an array of content blocks, but got a number",
  );
  // Other errors keep their whole message after the path.
  const other = invalidRequest("The model is busy.", "model");
  assert.equal(other.toAnthropicBody().error.message, "model: The model is busy.");
});
