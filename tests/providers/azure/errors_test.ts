import assert from "node:assert/strict";
import { filteredCategories, parseAzureError } from "../../../src/providers/azure/errors.ts";
import { contentFilterError } from "../../support/fake_azure.ts";

Deno.test("azure errors: a content-filter refusal names the filtered categories", () => {
  const detail = parseAzureError(contentFilterError());
  assert.equal(detail.code, "content_filter");
  assert.equal(detail.type, "invalid_request_error");
  assert.equal(detail.param, "prompt");
  assert.match(detail.message!, /^The response was filtered due to the prompt triggering/);
  assert.match(detail.message!, /\(filtered: violence \(medium\)\)$/);
});

Deno.test("azure errors: other errors read as OpenAI's", () => {
  assert.deepEqual(parseAzureError({ error: { code: "429", message: "Rate limit" } }), {
    message: "Rate limit",
    type: null,
    code: "429",
    param: null,
  });
});

Deno.test("azure errors: only filtered categories with plain names count", () => {
  assert.deepEqual(
    filteredCategories({
      hate: { filtered: false, severity: "safe" },
      jailbreak: { filtered: true, detected: true },
      sexual: { filtered: true, severity: "high" },
      "<b>x</b>": { filtered: true },
      self_harm: "nonsense",
    }),
    ["jailbreak", "sexual (high)"],
  );
});
