import assert from "node:assert/strict";
import type { ModelRecord } from "../../../src/catalogue/model.ts";
import type { ImageGenerationConfig } from "../../../src/config/types.ts";
import { ApiError } from "../../../src/errors.ts";
import { imageModelId, readImageRequest } from "../../../src/api/images/request.ts";

const FULL: ImageGenerationConfig = {
  sizes: ["1024x1024", "1024x1792", "1792x1024"],
  max_n: 4,
  guidance_scale: true,
  num_inference_steps: true,
};
const BASIC: ImageGenerationConfig = {
  sizes: ["512x512"],
  max_n: 1,
  guidance_scale: false,
  num_inference_steps: false,
};
const model = { id: "img" } as ModelRecord;

function rejects(body: Record<string, unknown>, image: ImageGenerationConfig, param: string) {
  assert.throws(() => readImageRequest(body, model, image), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    assert.equal(e.param, param);
    return true;
  });
}

Deno.test("readImageRequest fills the spec's defaults for a model that takes every parameter", () => {
  const { request, responseFormat } = readImageRequest({ prompt: "a cat" }, model, FULL);
  assert.deepEqual(request, {
    model: "img",
    prompt: "a cat",
    n: 1,
    size: "1024x1024",
    width: 1024,
    height: 1024,
    guidance_scale: 3.5,
    num_inference_steps: 30,
  });
  assert.equal(responseFormat, "url");
});

Deno.test("readImageRequest: a model without the parameters gets null, and its own first size", () => {
  const { request } = readImageRequest({ prompt: "a cat" }, model, BASIC);
  assert.equal(request.size, "512x512");
  assert.equal(request.guidance_scale, null);
  assert.equal(request.num_inference_steps, null);
});

Deno.test("readImageRequest: bounds are inclusive", () => {
  const edge = {
    prompt: "x",
    n: 4,
    guidance_scale: 0,
    num_inference_steps: 150,
    size: "1792x1024",
  };
  const { request } = readImageRequest(edge, model, FULL);
  assert.deepEqual(
    [request.n, request.guidance_scale, request.num_inference_steps, request.width, request.height],
    [4, 0, 150, 1792, 1024],
  );
  readImageRequest({ prompt: "x", guidance_scale: 20, num_inference_steps: 1 }, model, FULL);
  rejects({ prompt: "x", guidance_scale: 20.01 }, FULL, "guidance_scale");
  rejects({ prompt: "x", num_inference_steps: 151 }, FULL, "num_inference_steps");
  rejects({ prompt: "x", n: 5 }, FULL, "n");
  rejects({ prompt: "x", guidance_scale: Infinity }, FULL, "guidance_scale");
});

Deno.test("imageModelId: required, a non-empty string", () => {
  assert.equal(imageModelId({ model: "m" }), "m");
  for (const body of [{}, { model: null }, { model: "" }, { model: ["m"] }]) {
    assert.throws(
      () => imageModelId(body),
      (e: unknown) => e instanceof ApiError && e.param === "model",
    );
  }
});
