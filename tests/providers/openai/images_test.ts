/**
 * The OpenAI-style image adapter: the request it writes for each kind of model, how it reads
 * the answer (count, base64, URLs), and what it does with each image format and size.
 */
import assert from "node:assert/strict";
import { encodeJpeg } from "../../../src/images/jpeg.ts";
import {
  isGptImageModel,
  readImageAnswer,
  toJpegDataUrl,
  toOpenAIImageBody,
} from "../../../src/providers/openai/images.ts";
import { OpenAIProvider } from "../../../src/providers/openai/provider.ts";
import type { ImageRequest } from "../../../src/types/openai.ts";
import { fakePicture } from "../../support/fake_openai_images.ts";
import { gifBytes, webpBytes } from "../../support/images.ts";
import { checkJpeg, jpegFromDataUrl } from "../../support/jpeg_check.ts";
import { callContext, modelRecord, providerDeps } from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";

function request(patch: Partial<ImageRequest> = {}): ImageRequest {
  return {
    model: "gw-image",
    prompt: "a red kite over the sea",
    n: 1,
    size: "64x48",
    width: 64,
    height: 48,
    guidance_scale: null,
    num_inference_steps: null,
    ...patch,
  };
}

Deno.test("toOpenAIImageBody: b64_json for DALL·E-style models, none for GPT image models", () => {
  assert.deepEqual(toOpenAIImageBody(request({ n: 2 }), "dall-e-2"), {
    model: "dall-e-2",
    prompt: "a red kite over the sea",
    n: 2,
    size: "64x48",
    response_format: "b64_json",
  });
  for (const model of ["gpt-image-1", "gpt-image-1-mini", "openai/gpt-image-1.5"]) {
    assert.ok(isGptImageModel(model));
    const body = toOpenAIImageBody(request(), model);
    assert.ok(!("response_format" in body), model);
  }
  assert.ok(!isGptImageModel("dall-e-3"));
});

Deno.test("toOpenAIImageBody: guidance_scale and num_inference_steps only when the model takes them", () => {
  const body = toOpenAIImageBody(
    request({ guidance_scale: 7.5, num_inference_steps: 20 }),
    "flux-dev",
  );
  assert.equal(body.guidance_scale, 7.5);
  assert.equal(body.num_inference_steps, 20);
  const plain = toOpenAIImageBody(request(), "dall-e-3");
  assert.ok(!("guidance_scale" in plain) && !("num_inference_steps" in plain));
  const one = toOpenAIImageBody(request({ num_inference_steps: 4 }), "flux-schnell");
  assert.deepEqual([one.guidance_scale, one.num_inference_steps], [undefined, 4]);
});

Deno.test("readImageAnswer: n base64 images, else a 502 saying what came", async () => {
  assert.deepEqual(
    readImageAnswer({ created: 1, data: [{ b64_json: "AA==", revised_prompt: "x" }] }, 1),
    ["AA=="],
  );
  const cases: [unknown, number, RegExp][] = [
    [{ created: 1, data: [{ b64_json: "AA==" }] }, 2, /returned 1 images for n = 2/],
    [{ created: 1, data: [{ b64_json: "AA==" }, { b64_json: "AA==" }] }, 1, /2 images for n = 1/],
    [{ created: 1, data: [{ url: "https://x/1.png" }] }, 1, /URL instead of base64/],
    [{ created: 1 }, 1, /no data array/],
    [{ created: 1, data: [{ b64_json: 5 }] }, 1, /data\[0\] has no b64_json/],
    ["nope", 1, /no data array/],
  ];
  for (const [body, n, message] of cases) {
    const error = await gatewayError(() => readImageAnswer(body, n));
    assert.equal(error.status, 502, JSON.stringify(body));
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, message);
  }
});

Deno.test("toJpegDataUrl: a PNG becomes a real JPEG of the same size", async () => {
  const png = fakePicture("a kite", 0, 64, 48);
  const url = await toJpegDataUrl(png.toBase64(), 64, 48, "data[0]");
  const decoded = checkJpeg(jpegFromDataUrl(url), 64, 48);
  // The picture survives: the fake's red channel rises from left to right.
  const red = (x: number) => decoded.data[(20 * 64 + x) * 4]!;
  assert.ok(red(60) - red(3) > 150, `${red(3)} → ${red(60)}`);
});

Deno.test("toJpegDataUrl: a JPEG passes through byte for byte", async () => {
  const jpeg = encodeJpeg({ width: 64, height: 48, data: new Uint8Array(64 * 48 * 4).fill(99) });
  const url = await toJpegDataUrl(jpeg.toBase64(), 64, 48, "data[0]");
  assert.deepEqual(jpegFromDataUrl(url), jpeg);
});

Deno.test("toJpegDataUrl: other formats, other sizes, broken files are 502s that say so", async () => {
  const png = fakePicture("x", 0, 64, 48);
  const jpeg = encodeJpeg({ width: 64, height: 48, data: new Uint8Array(64 * 48 * 4) });
  const brokenPng = png.slice();
  brokenPng[png.length - 20]! ^= 0xff; // inside the last IDAT: a CRC mismatch
  const cases: [Uint8Array | string, RegExp][] = [
    [
      webpBytes(64, 48),
      /data\[0\] is a WEBP image; the gateway returns JPEG and can only transcode PNG/,
    ],
    [gifBytes(64, 48), /is a GIF image/],
    [fakePicture("x", 0, 48, 64), /is 48x64, not the 64x48 asked for/],
    [encodeJpeg({ width: 32, height: 32, data: new Uint8Array(32 * 32 * 4) }), /is 32x32/],
    [jpeg.subarray(0, jpeg.length - 10), /JPEG that is cut short/],
    [brokenPng, /broken PNG: CRC mismatch/],
    [new TextEncoder().encode("<html>no</html>"), /not a PNG or JPEG image/],
    ["@@not base64@@", /not valid base64/],
  ];
  for (const [bytes, message] of cases) {
    const base64 = typeof bytes === "string" ? bytes : bytes.toBase64();
    const error = await gatewayError(() => toJpegDataUrl(base64, 64, 48, "data[0]"));
    assert.equal(error.status, 502, String(message));
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, message);
  }
});

Deno.test("openai adapter images: a caller gone while the answer arrives gets a 499, not images", async () => {
  const png = fakePicture("x", 0, 64, 48).toBase64();
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-test");
  const ctx = callContext(modelRecord({ upstream_model: "dall-e-2", chat_completions: false }));
  let bodies = 0;
  deps.http = new FetchHttpClient((_input, init) => {
    bodies++;
    assert.equal(JSON.parse(String(init?.body)).n, 2);
    ctx.abort.abort(); // the client leaves while the upstream answers
    return Promise.resolve(
      Response.json({ created: 1, data: [{ b64_json: png }, { b64_json: png }] }),
    );
  });
  const provider = new OpenAIProvider(deps);
  const error = await gatewayError(() => provider.generateImages(request({ n: 2 }), ctx));
  assert.equal(error.status, 499);
  assert.equal(bodies, 1);
});
