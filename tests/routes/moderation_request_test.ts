import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { moderationModelId, readModerationInput } from "../../src/routes/moderation_request.ts";
import { pngUrl } from "../support/image_fixtures.ts";

const param = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    return e.param;
  }
  assert.fail("no error");
};

Deno.test("readModerationInput: a string, an array, and OpenAI's content parts", async () => {
  assert.deepEqual(readModerationInput({ input: "a" }), { input: ["a"], images: [] });
  assert.deepEqual(readModerationInput({ input: ["a", ""] }), { input: ["a", ""], images: [] });
  const url = await pngUrl(null);
  assert.deepEqual(
    readModerationInput({
      input: [
        { type: "text", text: "one" },
        { type: "image_url", image_url: { url } },
        { type: "text", text: "two" },
      ],
      input_images: [url],
    }),
    { input: ["one\ntwo"], images: [url, url] },
  );
  assert.deepEqual(readModerationInput({ input: "a", input_images: null }), {
    input: ["a"],
    images: [],
  });
});

Deno.test("readModerationInput: errors name the parameter", () => {
  assert.equal(param(() => readModerationInput({})), "input");
  assert.equal(param(() => readModerationInput({ input: [1] })), "input[0]");
  assert.equal(param(() => readModerationInput({ input: ["a", {}] })), "input[1]");
  assert.equal(param(() => readModerationInput({ input: [{}, "a"] })), "input[0].type");
  assert.equal(param(() => readModerationInput({ input: "a", input_images: {} })), "input_images");
  assert.equal(
    param(() => readModerationInput({ input: "a", input_images: ["data:image/png;base64,AAAA"] })),
    "input_images[0]",
  );
});

Deno.test("moderationModelId: optional, else a non-empty string", () => {
  assert.equal(moderationModelId({}), null);
  assert.equal(moderationModelId({ model: null }), null);
  assert.equal(moderationModelId({ model: "m" }), "m");
  assert.equal(param(() => moderationModelId({ model: "" })), "model");
  assert.equal(param(() => moderationModelId({ model: ["m"] })), "model");
});
