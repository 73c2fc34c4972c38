import assert from "node:assert/strict";
import { promptEstimate, worstCaseTokens } from "../../src/limits/estimate.ts";

Deno.test("promptEstimate: text by its length over three, data (a data URL, long base64) as an image", () => {
  const prose = "The quick brown fox jumps over the lazy dog. ".repeat(20);
  const base64 = new Uint8Array(30_000).fill(7).toBase64();
  const body = {
    messages: [{
      role: "user",
      content: [
        { type: "text", text: prose },
        { type: "image", source: { type: "base64", media_type: "image/png", data: base64 } },
        { type: "file", file: { file_data: `data:application/pdf;base64,${base64}` } },
      ],
    }],
  };
  const keys = "messages" + "role" + "user" + "content" + "type" + "text" + "text" + "type" +
    "image" + "source" + "type" + "base64" + "media_type" + "image/png" + "data" + "type" +
    "file" + "file" + "file_data";
  assert.equal(promptEstimate(body), Math.ceil((prose.length + keys.length) / 3) + 2 * 1600);
  // Prose longer than the sample is text, base64-looking from its start is data.
  assert.equal(promptEstimate(["x ".repeat(2000)]), Math.ceil(4000 / 3));
  assert.equal(promptEstimate(["A".repeat(2000) + " and then prose"]), 1600);
});

Deno.test("worstCaseTokens: the prompt estimate and the max output field", () => {
  assert.deepEqual(worstCaseTokens({ max_tokens: 50, messages: ["hi"] }, 256), {
    input: Math.ceil(("max_tokens" + "messages" + "hi").length / 3),
    output: 50,
  });
});
