import assert from "node:assert/strict";
import type { ModelRecord } from "../../../src/catalogue/model.ts";
import { ApiError } from "../../../src/errors.ts";
import type { ImageRequest } from "../../../src/types/openai.ts";
import { renderImages } from "../../../src/providers/simulator/images.ts";
import { paintScene } from "../../../src/providers/simulator/painter.ts";
import { planScene } from "../../../src/providers/simulator/scene.ts";
import { checkJpeg, jpegFromDataUrl } from "../../support/jpeg_check.ts";

const DEFAULTS = { guidanceScale: 3.5, steps: 30 };

/** Mean R, G, B, luma and saturation (max − min channel) of an RGB picture. */
function stats(rgb: Uint8Array) {
  let r = 0, g = 0, b = 0, sat = 0;
  const n = rgb.length / 3;
  for (let i = 0; i < rgb.length; i += 3) {
    r += rgb[i]!;
    g += rgb[i + 1]!;
    b += rgb[i + 2]!;
    sat += Math.max(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!) -
      Math.min(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!);
  }
  return { r: r / n, g: g / n, b: b / n, luma: (0.3 * r + 0.59 * g + 0.11 * b) / n, sat: sat / n };
}

/** Mean absolute difference between horizontally neighbouring pixels: grain shows up here. */
function roughness(rgb: Uint8Array, width: number): number {
  let sum = 0, count = 0;
  for (let i = 3; i < rgb.length; i++) {
    if ((i / 3) % width < 1) continue;
    sum += Math.abs(rgb[i]! - rgb[i - 3]!);
    count++;
  }
  return sum / count;
}

const paint = (prompt: string, options = DEFAULTS, index = 0) =>
  paintScene(planScene(prompt, index), 160, 96, options);

Deno.test("planScene reads colours, time of day and elements from the words", () => {
  const scene = planScene("A GREEN forest and a Blue lake at sunset", 0);
  assert.equal(scene.hue, 120);
  assert.equal(scene.accent, 220);
  assert.ok(scene.colourNamed);
  assert.equal(scene.time, "sunset");
  assert.deepEqual([...scene.elements].sort(), ["sun", "trees", "water"]);
  assert.equal(planScene("city at night", 0).time, "night");
  assert.ok(planScene("city at night", 0).elements.has("stars"));
  assert.equal(planScene("an astronaut riding a horse", 0).elements.size, 0);
});

Deno.test("planScene: the same prompt and index give the same seed; index and text change it", () => {
  assert.equal(planScene("a cat", 0).seed, planScene("a cat", 0).seed);
  assert.notEqual(planScene("a cat", 0).seed, planScene("a cat", 1).seed);
  assert.notEqual(planScene("a cat", 0).seed, planScene("a cat.", 0).seed);
});

Deno.test("paintScene: the picture follows the prompt's colours and time of day", () => {
  const red = stats(paint("a red poppy"));
  assert.ok(red.r > red.b + 40, `red prompt: ${JSON.stringify(red)}`);
  const blue = stats(paint("a deep blue ocean"));
  assert.ok(blue.b > blue.r + 40, `blue prompt: ${JSON.stringify(blue)}`);
  const night = stats(paint("a village at night"));
  const day = stats(paint("a sunny village"));
  assert.ok(day.luma > night.luma + 60, `day ${day.luma} vs night ${night.luma}`);
});

Deno.test("paintScene: guidance_scale raises saturation, fewer steps leave more grain", () => {
  const low = stats(paint("a meadow with flowers", { guidanceScale: 1, steps: 30 }));
  const high = stats(paint("a meadow with flowers", { guidanceScale: 10, steps: 30 }));
  assert.ok(high.sat > low.sat * 1.5, `saturation ${low.sat} → ${high.sat}`);
  const rough = roughness(paint("a grey wall", { guidanceScale: 3.5, steps: 3 }), 160);
  const smooth = roughness(paint("a grey wall", { guidanceScale: 3.5, steps: 100 }), 160);
  assert.ok(rough > smooth * 3, `roughness ${smooth} → ${rough}`);
});

Deno.test("paintScene is deterministic and gives exactly width × height pixels", () => {
  assert.deepEqual(paint("a snowy mountain"), paint("a snowy mountain"));
  assert.equal(paintScene(planScene("x", 0), 33, 17, DEFAULTS).length, 33 * 17 * 3);
});

const request = (patch: Partial<ImageRequest> = {}): ImageRequest => ({
  model: "sim-image",
  prompt: "a harbour",
  n: 2,
  size: "40x24",
  width: 40,
  height: 24,
  guidance_scale: null,
  num_inference_steps: null,
  ...patch,
});

const call = (signal = new AbortController().signal) => ({
  signal,
  requestId: "req_test",
  upstreamModel: "sim-image",
  model: {} as ModelRecord,
  dropped: new Set<string>(),
});

Deno.test("renderImages: one JPEG data URL per image, of the requested size", async () => {
  const urls = await renderImages(request(), call());
  assert.equal(urls.length, 2);
  for (const url of urls) checkJpeg(jpegFromDataUrl(url), 40, 24);
  // Parameters the model does not take fall back to the spec's defaults.
  const explicit = await renderImages(
    request({ guidance_scale: 3.5, num_inference_steps: 30 }),
    call(),
  );
  assert.deepEqual(explicit, urls);
});

Deno.test("renderImages stops when the caller has gone", async () => {
  const controller = new AbortController();
  controller.abort(new Error("client went away"));
  await assert.rejects(renderImages(request(), call(controller.signal)), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 499);
    return true;
  });
});
