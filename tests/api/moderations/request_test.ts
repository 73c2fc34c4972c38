import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { moderationModelId, readModerationInput } from "../../../src/api/moderations/request.ts";
import { DEFAULT_IMAGE_CAPS } from "../../../src/config/limits.ts";
import { pngUrl } from "../../support/image_fixtures.ts";
import { dataUrl, pngBytes } from "../../support/images.ts";

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

Deno.test("readModerationInput: images over the caps are a 400 image_too_large naming them", () => {
  const image = dataUrl("image/png", pngBytes(100, 100)); // 57 bytes, 10000 pixels
  const caps = { ...DEFAULT_IMAGE_CAPS, max_image_pixels: 9999 };
  const tooLarge = (body: Record<string, unknown>, limits = caps) => {
    try {
      readModerationInput(body, limits);
    } catch (e) {
      assert.ok(e instanceof ApiError);
      assert.deepEqual([e.status, e.type, e.code], [
        400,
        "invalid_request_error",
        "image_too_large",
      ]);
      return `${e.param}: ${e.message}`;
    }
    assert.fail("no error");
  };
  assert.match(
    tooLarge({ input: "a", input_images: [image] }),
    /^input_images\[0\]: .*100x100 = 10000 pixels; the limit is 9999 pixels per image/,
  );
  const part = { type: "image_url", image_url: { url: image } };
  assert.match(
    tooLarge({ input: [{ type: "text", text: "a" }, part] }),
    /^input\[1\]\.image_url\.url: /,
  );
  // The parts' images and input_images count together, parts first.
  const together = { ...DEFAULT_IMAGE_CAPS, max_request_image_bytes: 57 * 3 };
  const body = { input: [part, part], input_images: [image, image] };
  assert.match(tooLarge(body, together), /^input_images\[1\]: .* 228 bytes; the limit is 171/);
  assert.equal(readModerationInput({ ...body, input_images: [image] }, together).images.length, 3);
});

Deno.test("readModerationInput: too many images is refused before any is decoded", () => {
  const body = { input: "a", input_images: new Array(17).fill("data:image/png;base64,@@@@") };
  assert.equal(param(() => readModerationInput(body)), "input_images");
});

Deno.test("moderationModelId: optional, else a non-empty string", () => {
  assert.equal(moderationModelId({}), null);
  assert.equal(moderationModelId({ model: null }), null);
  assert.equal(moderationModelId({ model: "m" }), "m");
  assert.equal(param(() => moderationModelId({ model: "" })), "model");
  assert.equal(param(() => moderationModelId({ model: ["m"] })), "model");
});
