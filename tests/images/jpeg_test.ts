import assert from "node:assert/strict";
import { encodeJpeg, jpegDataUrl } from "../../src/images/jpeg.ts";
import { checkJpeg, jpegFromDataUrl, jpegStructure } from "../support/jpeg_check.ts";

/** A smooth test picture with detail in every channel. */
function picture(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      data[p] = 128 + 120 * Math.sin(x / 11);
      data[p + 1] = 128 + 120 * Math.cos(y / 13);
      data[p + 2] = 128 + 100 * Math.sin((x + y) / 9);
      data[p + 3] = 255;
    }
  }
  return data;
}

/** Mean absolute difference over the RGB channels of two RGBA buffers. */
function meanError(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    if (i % 4 === 3) continue;
    sum += Math.abs(a[i]! - b[i]!);
    n++;
  }
  return sum / n;
}

for (const subsampling of ["4:2:0", "4:4:4"] as const) {
  Deno.test(`encodeJpeg ${subsampling}: any size decodes back to the picture`, () => {
    for (const [w, h] of [[1, 1], [7, 13], [16, 16], [17, 33], [64, 8], [300, 200]]) {
      const source = picture(w!, h!);
      const jpeg = encodeJpeg({ width: w!, height: h!, data: source }, { subsampling });
      const decoded = checkJpeg(jpeg, w!, h!);
      const error = meanError(decoded.data, source);
      assert.ok(error < 4, `${w}x${h}: mean error ${error.toFixed(2)} is too large`);
    }
  });
}

Deno.test("encodeJpeg: declares the sampling factors it uses", () => {
  const image = { width: 32, height: 32, data: picture(32, 32) };
  const frame420 = jpegStructure(encodeJpeg(image)).frame;
  assert.deepEqual(frame420.components, [[1, 0x22, 0], [2, 0x11, 1], [3, 0x11, 1]]);
  const frame444 = jpegStructure(encodeJpeg(image, { subsampling: "4:4:4" })).frame;
  assert.deepEqual(frame444.components, [[1, 0x11, 0], [2, 0x11, 1], [3, 0x11, 1]]);
});

Deno.test("encodeJpeg: segments in baseline JFIF order", () => {
  const { markers } = jpegStructure(encodeJpeg({ width: 8, height: 8, data: picture(8, 8) }));
  // SOI, APP0, DQT, SOF0, DHT, SOS, EOI
  assert.deepEqual(markers, [0xd8, 0xe0, 0xdb, 0xc0, 0xc4, 0xda, 0xd9]);
});

Deno.test("encodeJpeg: quality trades size for fidelity", () => {
  const source = picture(128, 96);
  const image = { width: 128, height: 96, data: source };
  const results = [20, 60, 95].map((quality) => {
    const jpeg = encodeJpeg(image, { quality });
    return { size: jpeg.length, error: meanError(checkJpeg(jpeg, 128, 96).data, source) };
  });
  assert.ok(results[0]!.size < results[1]!.size && results[1]!.size < results[2]!.size);
  assert.ok(results[0]!.error > results[1]!.error && results[1]!.error > results[2]!.error);
});

Deno.test("encodeJpeg: extreme content at quality 1 and 100 still decodes", () => {
  // A one-pixel checkerboard of black and white: the largest AC coefficients there are.
  const w = 24, h = 24;
  const data = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    const v = ((i % w) + Math.floor(i / w)) % 2 ? 255 : 0;
    data.set([v, v, v, 255], i * 4);
  }
  for (const quality of [1, 100]) {
    const decoded = checkJpeg(encodeJpeg({ width: w, height: h, data }, { quality }), w, h);
    if (quality === 100) assert.ok(meanError(decoded.data, data) < 8);
  }
});

Deno.test("encodeJpeg: RGB input gives the same file as RGBA input", () => {
  const rgba = picture(40, 30);
  const rgb = rgba.filter((_, i) => i % 4 !== 3);
  assert.deepEqual(
    encodeJpeg({ width: 40, height: 30, data: rgb, channels: 3 }),
    encodeJpeg({ width: 40, height: 30, data: rgba }),
  );
});

Deno.test("encodeJpeg: the spec's image sizes", () => {
  for (const [w, h] of [[1024, 1024], [1024, 1792], [1792, 1024]]) {
    const jpeg = encodeJpeg({ width: w!, height: h!, data: picture(w!, h!) });
    checkJpeg(jpeg, w!, h!);
  }
});

Deno.test("encodeJpeg: rejects impossible sizes and short data", () => {
  const data = new Uint8Array(16);
  assert.throws(() => encodeJpeg({ width: 0, height: 2, data }), /positive integers/);
  assert.throws(() => encodeJpeg({ width: 70000, height: 1, data }), /over 65535/);
  assert.throws(() => encodeJpeg({ width: 4, height: 4, data }), /shorter than 4x4x4/);
});

Deno.test("jpegDataUrl: base64 of the bytes behind the JPEG media type", () => {
  const jpeg = encodeJpeg({ width: 9, height: 9, data: picture(9, 9) });
  const url = jpegDataUrl(jpeg);
  assert.deepEqual(jpegFromDataUrl(url), jpeg);
});
