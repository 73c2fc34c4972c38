import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { PNG } from "npm:pngjs@7.0.0";
import { PngError } from "../../src/images/png.ts";
import { flattenOnWhite, pngToJpeg, pngToJpegDataUrl } from "../../src/images/transcode.ts";
import { checkJpeg, jpegFromDataUrl } from "../support/jpeg_check.ts";

/** A PNG (written by pngjs) with four quadrants: opaque red, transparent, half-blue, green. */
function quadrants(width: number, height: number): Uint8Array {
  const image = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const left = x < width / 2, top = y < height / 2;
      const rgba = top
        ? (left ? [255, 0, 0, 255] : [0, 0, 0, 0])
        : (left ? [0, 0, 255, 128] : [0, 160, 0, 255]);
      image.data.set(rgba, (y * width + x) * 4);
    }
  }
  return new Uint8Array(PNG.sync.write(image));
}

function pixel(image: { width: number; data: Uint8Array }, x: number, y: number): number[] {
  const p = (y * image.width + x) * 4;
  return Array.from(image.data.subarray(p, p + 3));
}

function near(actual: number[], expected: number[], tolerance = 12): void {
  assert.ok(
    actual.every((v, i) => Math.abs(v - expected[i]!) <= tolerance),
    `${actual} is not near ${expected}`,
  );
}

Deno.test("pngToJpegDataUrl: a PNG with alpha becomes a JPEG of the same size on white", async () => {
  const url = await pngToJpegDataUrl(quadrants(64, 48));
  const decoded = checkJpeg(jpegFromDataUrl(url), 64, 48);
  near(pixel(decoded, 10, 10), [255, 0, 0]);
  near(pixel(decoded, 50, 10), [255, 255, 255]);
  near(pixel(decoded, 10, 40), [127, 127, 255]);
  near(pixel(decoded, 50, 40), [0, 160, 0]);
});

Deno.test("pngToJpeg: a large upstream-sized PNG transcodes", async () => {
  const jpeg = await pngToJpeg(quadrants(1024, 1024), { quality: 90 });
  checkJpeg(jpeg, 1024, 1024);
});

Deno.test("flattenOnWhite: exact compositing", () => {
  const out = flattenOnWhite({
    width: 3,
    height: 1,
    data: Uint8Array.from([10, 20, 30, 255, 10, 20, 30, 0, 0, 100, 200, 51]),
  });
  // 51/255 = 0.2 of the colour, 0.8 of white.
  assert.deepEqual(Array.from(out), [10, 20, 30, 255, 255, 255, 204, 224, 244]);
});

Deno.test("pngToJpeg: a broken PNG is a PngError, not a crash", async () => {
  const png = quadrants(8, 8);
  await assert.rejects(pngToJpeg(png.subarray(0, 50)), PngError);
  await assert.rejects(pngToJpeg(Buffer.from("GIF89a")), PngError);
});
