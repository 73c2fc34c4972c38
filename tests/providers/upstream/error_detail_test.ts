import assert from "node:assert/strict";
import { boundedDetail } from "../../../src/providers/upstream/error_detail.ts";
import { said } from "../../support/upstream_calls.ts";

Deno.test("boundedDetail cuts quoted values to 100 characters and the message to 1,000", () => {
  const long = "p".repeat(300);
  const detail = boundedDetail(
    said(`Invalid 'messages[0]': input_value='${long}' (the model's limit); see "${long}`, {
      type: "invalid_request_error",
      code: "bad value with spaces",
      param: long,
    }),
    null,
  );
  assert.equal(
    detail.message,
    `Invalid 'messages[0]': input_value='${"p".repeat(99)}…' (the model's limit); see "${
      "p".repeat(99)
    }…`,
  );
  assert.equal(detail.type, "invalid_request_error");
  assert.equal(detail.code, null, "a code that is not an identifier is dropped");
  assert.equal(detail.param, `${"p".repeat(99)}…`);
  const huge = boundedDetail(said("word ".repeat(1000)), null).message!;
  assert.equal(huge.length, 1000);
  assert.ok(huge.endsWith("…"));
});

Deno.test("boundedDetail removes the secret everywhere, before cutting", () => {
  const secret = "sk-secret-0123456789";
  const detail = boundedDetail(
    said(`${"x".repeat(990)} ${secret}`, { type: secret, code: "code_1", param: secret }),
    secret,
  );
  assert.ok(!JSON.stringify(detail).includes("sk-secret"));
  assert.equal(detail.type, null);
  assert.equal(detail.code, "code_1");
  assert.equal(detail.param, "[redacted]");
});
