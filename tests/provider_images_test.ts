/**
 * `POST /v1/images/generations` end to end through a real gateway port, with the `openai`
 * client, against the fake OpenAI upstream: what is sent for DALL·E, GPT image and diffusion
 * models, PNG answers transcoded to JPEG of the right size, JPEG passed through, other formats,
 * counts and sizes refused with a 502, the upstream fault table and a client disconnect.
 */
import assert from "node:assert/strict";
import { encodeJpeg } from "../src/images/jpeg.ts";
import { openaiClient } from "./support/client.ts";
import { assertDisconnectAborts, assertFaultMapping } from "./support/fault_mapping.ts";
import { fakePicture } from "./support/fake_openai_images.ts";
import { startGateway } from "./support/gateway.ts";
import { clientError } from "./support/rejection.ts";
import { webpBytes } from "./support/images.ts";
import { checkJpeg, jpegFromDataUrl } from "./support/jpeg_check.ts";

const MODELS = [
  {
    id: "oa-dall-e-3",
    provider: "oa",
    upstream_model: "dall-e-3",
    image_generation: { sizes: ["1024x1024", "1792x1024", "1024x1792"], max_n: 1 },
  },
  {
    id: "oa-gpt-image",
    provider: "oa",
    upstream_model: "gpt-image-1",
    image_generation: { sizes: ["1024x1024", "1536x1024", "1024x1536"], max_n: 4 },
  },
  {
    id: "oa-dall-e-2",
    provider: "oa",
    upstream_model: "dall-e-2",
    image_generation: { sizes: ["256x256", "512x512"], max_n: 4 },
  },
  {
    id: "oa-flux",
    provider: "oa",
    upstream_model: "flux-schnell",
    image_generation: {
      sizes: ["64x48", "96x64"],
      max_n: 4,
      guidance_scale: true,
      num_inference_steps: true,
    },
  },
];

/** The red and blue channels at a pixel of a decoded image (RGBA). */
function pixel(image: { width: number; data: Uint8Array }, x: number, y: number) {
  const p = (y * image.width + x) * 4;
  return { red: image.data[p]!, blue: image.data[p + 2]! };
}

Deno.test("images through an OpenAI-style upstream: DALL·E 3's PNG comes back as a JPEG data URL of the size asked for", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const result = await client.images.generate({
    model: "oa-dall-e-3",
    prompt: "a lighthouse at dusk",
    size: "1024x1792",
  });
  const fake = gateway.openai;
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.path, "/v1/images/generations");
  assert.deepEqual(fake.last.body, {
    model: "dall-e-3",
    prompt: "a lighthouse at dusk",
    n: 1,
    size: "1024x1792",
    response_format: "b64_json",
  });
  assert.equal(result.data?.length, 1);
  assert.deepEqual(Object.keys(result.data![0]!), ["url"]); // no revised_prompt, no b64_json
  const image = checkJpeg(jpegFromDataUrl(result.data![0]!.url!), 1024, 1792);
  // The upstream's picture, not another: red rises from left to right.
  assert.ok(pixel(image, 1000, 900).red - pixel(image, 20, 900).red > 200);
});

Deno.test("images through an OpenAI-style upstream: gpt-image-1 gets no response_format; n = 2 gives two images", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const result = await client.images.generate({
    model: "oa-gpt-image",
    prompt: "two cats",
    n: 2,
    response_format: "b64_json",
  });
  const fake = gateway.openai;
  assert.deepEqual(fake.violations, []);
  assert.deepEqual(fake.last.body, {
    model: "gpt-image-1",
    prompt: "two cats",
    n: 2,
    size: "1024x1024",
  });
  assert.equal(result.data?.length, 2);
  const [a, b] = result.data!.map((d) => checkJpeg(Uint8Array.fromBase64(d.b64_json!), 1024, 1024));
  assert.ok(Math.abs(pixel(a!, 500, 500).blue - pixel(b!, 500, 500).blue) > 40);
});

Deno.test("images through an OpenAI-style upstream: n and size pass through as the model allows", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const fake = gateway.openai;
  for (
    const [model, upstream, size, n] of [
      ["oa-dall-e-2", "dall-e-2", "512x512", 3],
      ["oa-dall-e-2", "dall-e-2", "256x256", 1],
      ["oa-flux", "flux-schnell", "96x64", 4],
    ] as const
  ) {
    const result = await client.images.generate({ model, prompt: "a map of the stars", n, size });
    assert.deepEqual(fake.violations, []);
    const sent = fake.last.body as Record<string, unknown>;
    assert.equal(sent.model, upstream);
    assert.equal(sent.n, n);
    assert.equal(sent.size, size);
    const [width, height] = size.split("x").map(Number) as [number, number];
    assert.equal(result.data?.length, n);
    const urls = new Set(result.data!.map((d) => d.url!));
    assert.equal(urls.size, n, "every image differs");
    for (const url of urls) checkJpeg(jpegFromDataUrl(url), width, height);
  }
  // Over the model's max_n, or a size it does not have: refused before any upstream call.
  const calls = fake.received.length;
  const error = await clientError(() =>
    client.images.generate({ model: "oa-dall-e-3", prompt: "x", n: 2 })
  );
  assert.equal(error.status, 400);
  assert.equal(fake.received.length, calls);
});

Deno.test("images through an OpenAI-style upstream: guidance_scale and num_inference_steps only for models that take them", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const fake = gateway.openai;
  await client.images.generate(
    { model: "oa-flux", prompt: "a fern", guidance_scale: 7.5, num_inference_steps: 12 } as never,
  );
  assert.deepEqual(fake.last.body, {
    model: "flux-schnell",
    prompt: "a fern",
    n: 1,
    size: "64x48",
    response_format: "b64_json",
    guidance_scale: 7.5,
    num_inference_steps: 12,
  });
  // Not given: the spec's defaults are sent.
  await client.images.generate({ model: "oa-flux", prompt: "a fern" });
  const sent = fake.last.body as Record<string, unknown>;
  assert.deepEqual([sent.guidance_scale, sent.num_inference_steps], [3.5, 30]);
  // A model without them: never sent (the fake, like OpenAI, would reject them).
  await client.images.generate({ model: "oa-dall-e-2", prompt: "a fern", size: "256x256" });
  assert.ok(!("guidance_scale" in (fake.last.body as object)));
  assert.ok(!("num_inference_steps" in (fake.last.body as object)));
  assert.deepEqual(fake.violations, []);
});

Deno.test("images through an OpenAI-style upstream: a JPEG passes through untouched; WebP, wrong counts and sizes are 502s", async () => {
  await using gateway = await startGateway({ models: MODELS });
  const client = openaiClient(gateway.server);
  const fake = gateway.openai;
  const answer = (...images: Uint8Array[]) =>
    JSON.stringify({ created: 1, data: images.map((i) => ({ b64_json: i.toBase64() })) });
  const jpeg = encodeJpeg({ width: 64, height: 48, data: new Uint8Array(64 * 48 * 4).fill(180) });
  fake.faults = [{ garbage: answer(jpeg) }];
  const passed = await client.images.generate({ model: "oa-flux", prompt: "grey" });
  assert.deepEqual(jpegFromDataUrl(passed.data![0]!.url!), jpeg);

  const webp = webpBytes(64, 48);
  const png = fakePicture("x", 0, 64, 48);
  const rows: [string, RegExp][] = [
    [
      answer(webp),
      /data\[0\] is a WEBP image; the gateway returns JPEG and can only transcode PNG/,
    ],
    [answer(png, png), /returned 2 images for n = 1/],
    [answer(fakePicture("x", 0, 96, 64)), /is 96x64, not the 64x48 asked for/],
    [JSON.stringify({ created: 1, data: [{ url: "https://x.example/1.png" }] }), /URL instead/],
    ["{}", /malformed image answer/],
  ];
  for (const [garbage, message] of rows) {
    fake.faults = [{ garbage }];
    const error = await clientError(() =>
      client.images.generate({ model: "oa-flux", prompt: "x" })
    );
    assert.equal(error.status, 502, garbage.slice(0, 80));
    assert.equal((error.error as { code: string }).code, "upstream_error");
    assert.match(error.message, message);
  }
});

const IMAGES_ENDPOINT = {
  path: "/v1/images/generations",
  upstreamPath: "/v1/images/generations",
  body: { model: "oa-flux", prompt: "a small boat", n: 2 },
  models: MODELS,
};

Deno.test("images through an OpenAI-style upstream: 429 → 429, 500 → 502 after retries, 401 → 502 without the key, no answer → 504", async () => {
  await assertFaultMapping(IMAGES_ENDPOINT);
});

Deno.test("images through an OpenAI-style upstream: a client that disconnects closes the upstream call", async () => {
  await assertDisconnectAborts(IMAGES_ENDPOINT);
});
