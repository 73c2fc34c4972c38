import assert from "node:assert/strict";
import {
  canonicalCallId,
  parseCallId,
  synthesizedCallId,
} from "../../../src/providers/gemini/call_ids.ts";

Deno.test("gemini call ids: a signature survives the id byte for byte, padding included", () => {
  for (const signature of ["", "a", "ab+/", "YWI=", "YQ==", "Cq8BAY89a1/+x" + "z".repeat(2000)]) {
    const id = canonicalCallId("call_42", signature);
    assert.match(id, /^[A-Za-z0-9_-]+$/, "within Anthropic's tool_use id alphabet");
    const parsed = parseCallId(id);
    assert.deepEqual(parsed, {
      geminiId: "call_42",
      signature: signature === "" ? null : signature,
    });
  }
});

Deno.test("gemini call ids: ids the gateway made are never sent as Gemini's", () => {
  const own = synthesizedCallId("resp/1+x", 3);
  assert.equal(own, "swy_resp1x_3");
  assert.deepEqual(parseCallId(own), { geminiId: null, signature: null });
  assert.deepEqual(parseCallId(canonicalCallId(own, "c2ln")), {
    geminiId: null,
    signature: "c2ln",
  });
});

Deno.test("gemini call ids: other providers' ids are kept as they are; a signature that is not base64 is left out", () => {
  assert.deepEqual(parseCallId("toolu_01ABC"), { geminiId: "toolu_01ABC", signature: null });
  assert.deepEqual(parseCallId("gs_99_0_short_call_1"), {
    geminiId: "gs_99_0_short_call_1",
    signature: null,
  });
  assert.equal(canonicalCallId("call_1", "not base64!"), "call_1");
});
