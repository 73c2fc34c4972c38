import assert from "node:assert/strict";
import { pairInputs } from "../../src/moderation/pairing.ts";

Deno.test("pairInputs: image i with text i", () => {
  assert.deepEqual(pairInputs(["a", "b", "c"], ["1", "2"]), [
    { text: "a", images: ["1"] },
    { text: "b", images: ["2"] },
    { text: "c", images: [] },
  ]);
});

Deno.test("pairInputs: extra images go with the last text", () => {
  assert.deepEqual(pairInputs(["a", "b"], ["1", "2", "3", "4"]), [
    { text: "a", images: ["1"] },
    { text: "b", images: ["2", "3", "4"] },
  ]);
  assert.deepEqual(pairInputs(["only"], ["1", "2"]), [{ text: "only", images: ["1", "2"] }]);
});

Deno.test("pairInputs: no images, one pair per text", () => {
  assert.deepEqual(pairInputs(["a", "b"], []), [
    { text: "a", images: [] },
    { text: "b", images: [] },
  ]);
});
