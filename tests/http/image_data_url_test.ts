import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { DEFAULT_IMAGE_CAPS } from "../../src/config/limits.ts";
import {
  type ImageCaps,
  inspectImage,
  parseImageDataUrl,
  parseRequestImages,
} from "../../src/http/image_data_url.ts";
import { dataUrl, gifBytes, pngBytes } from "../support/images.ts";

const PNG_1x1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const GIF_1x1 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const WEBP_LOSSLESS_1x1 = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==";

function toBase64(bytes: number[]): string {
  return btoa(String.fromCharCode(...bytes));
}

/** SOI, an APP0 segment, then a baseline SOF0 declaring 640x480. */
const JPEG_HEADER = toBase64([
  0xff,
  0xd8,
  0xff,
  0xe0,
  0x00,
  0x10,
  0x4a,
  0x46,
  0x49,
  0x46,
  0x00,
  0x01,
  0x01,
  0x00,
  0x00,
  0x01,
  0x00,
  0x01,
  0x00,
  0x00,
  0xff,
  0xc0,
  0x00,
  0x11,
  0x08,
  0x01,
  0xe0,
  0x02,
  0x80,
  0x03,
  0x01,
  0x22,
  0x00,
  0x02,
  0x11,
  0x01,
  0x03,
  0x11,
  0x01,
  0xff,
  0xd9,
]);

Deno.test("parseImageDataUrl reads format, size and dimensions of each accepted format", () => {
  const png = parseImageDataUrl(`data:image/png;base64,${PNG_1x1}`, "p");
  assert.deepEqual([png.format, png.width, png.height, png.mediaType], ["png", 1, 1, "image/png"]);
  assert.equal(png.bytes, 70);
  const gif = parseImageDataUrl(`data:image/gif;base64,${GIF_1x1}`, "p");
  assert.deepEqual([gif.format, gif.width, gif.height], ["gif", 1, 1]);
  const webp = parseImageDataUrl(`data:image/webp;base64,${WEBP_LOSSLESS_1x1}`, "p");
  assert.deepEqual([webp.format, webp.width, webp.height], ["webp", 1, 1]);
  const jpeg = parseImageDataUrl(`data:image/jpeg;base64,${JPEG_HEADER}`, "p");
  assert.deepEqual([jpeg.format, jpeg.width, jpeg.height], ["jpeg", 640, 480]);
});

Deno.test("parseImageDataUrl rejects what is not an inline image, naming the param", () => {
  const cases: [unknown, RegExp][] = [
    [42, /must be a string/],
    ["https://example.com/cat.png", /Remote image URLs are not fetched/],
    ["data:text/plain;base64,aGVsbG8=", /base64 image data URL/],
    ["data:image/png;base64,***", /valid base64/],
    [`data:image/png;base64,${btoa("hello, this is not an image at all")}`, /not a PNG, JPEG/],
    [`data:image/png;base64,${GIF_1x1}`, /says image\/png but holds a GIF/],
    [`data:image/${"x".repeat(65)};base64,${GIF_1x1}`, /must be a base64 image data URL like/],
    [`data:image/png;base64,${PNG_1x1.slice(0, 16)}`, /not a PNG, JPEG|cut short/],
  ];
  for (const [url, message] of cases) {
    assert.throws(
      () => parseImageDataUrl(url, "messages[0].content[1].image_url.url"),
      (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 400);
        assert.equal(e.param, "messages[0].content[1].image_url.url");
        assert.match(e.message, message);
        return true;
      },
    );
  }
});

Deno.test("inspectImage finds the JPEG frame after other segments", () => {
  const bytes = Uint8Array.from(atob(JPEG_HEADER), (c) => c.charCodeAt(0));
  assert.deepEqual(inspectImage(bytes), { format: "jpeg", width: 640, height: 480 });
  assert.equal(inspectImage(bytes.subarray(0, 10)), null);
});

/** Asserts that `f` throws the 400 `image_too_large` naming `param`, with `message`. */
function tooLarge(f: () => unknown, param: string, message: RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
    assert.deepEqual([e.status, e.type, e.code, e.param], [
      400,
      "invalid_request_error",
      "image_too_large",
      param,
    ]);
    assert.match(e.message, message);
    return true;
  });
}

const caps = (patch: Partial<ImageCaps>): ImageCaps => ({ ...DEFAULT_IMAGE_CAPS, ...patch });

Deno.test("parseImageDataUrl: decoded size from the base64 length, padded or not", () => {
  assert.equal(parseImageDataUrl(`data:image/png;base64,${PNG_1x1}`, "p").bytes, 70);
  assert.equal(parseImageDataUrl(`data:image/png;base64,${PNG_1x1.slice(0, -2)}`, "p").bytes, 70);
  assert.equal(parseImageDataUrl(`data:image/gif;base64,${GIF_1x1}`, "p").bytes, 42);
  const spaced = `data:image/png;base64,${PNG_1x1.slice(0, 20)}\n ${PNG_1x1.slice(20)}`;
  assert.equal(parseImageDataUrl(spaced, "p").base64, PNG_1x1);
});

Deno.test("parseImageDataUrl: an image over max_image_bytes or max_image_pixels is refused", () => {
  const url = `data:image/png;base64,${PNG_1x1}`;
  assert.equal(parseImageDataUrl(url, "p", caps({ max_image_bytes: 70 })).bytes, 70);
  tooLarge(
    () => parseImageDataUrl(url, "input_images[3]", caps({ max_image_bytes: 69 })),
    "input_images[3]",
    /input_images\[3\] is too large: 70 bytes; the limit is 69 bytes per image/,
  );
  const big = dataUrl("image/png", pngBytes(5000, 5000));
  assert.equal(parseImageDataUrl(big, "p", caps({ max_image_pixels: 25_000_000 })).width, 5000);
  tooLarge(
    () => parseImageDataUrl(big, "p", caps({ max_image_pixels: 24_999_999 })),
    "p",
    /5000x5000 = 25000000 pixels; the limit is 24999999 pixels per image/,
  );
  tooLarge(
    () => parseImageDataUrl(dataUrl("image/gif", gifBytes(65535, 65535)), "p"),
    "p",
    /65535x65535 = 4294836225 pixels; the limit is 33554432 pixels per image/,
  );
});

Deno.test("parseImageDataUrl: a huge base64 payload is refused by its length, before decoding", () => {
  // 30 MiB of decoded bytes whose end is not base64 at all: decoding would say so.
  const url = `data:image/png;base64,${"A".repeat(40 * 1024 * 1024 - 4)}@@@@`;
  tooLarge(
    () => parseImageDataUrl(url, "messages[0].content[1].image_url.url"),
    "messages[0].content[1].image_url.url",
    /is too large: 31457280 bytes; the limit is 20971520 bytes per image/,
  );
});

Deno.test("parseRequestImages: all images of a request together within the request caps", () => {
  const fields = (n: number, url: string) =>
    Array.from({ length: n }, (_, i) => ({ url, param: `input_images[${i}]` }));
  const png = `data:image/png;base64,${PNG_1x1}`;
  const byBytes = caps({ max_request_image_bytes: 210 });
  assert.equal(parseRequestImages(fields(3, png), byBytes).length, 3);
  tooLarge(
    () => parseRequestImages(fields(4, png), byBytes),
    "input_images[3]",
    /\(70 bytes\) brings this request's images to 280 bytes; the limit is 210 bytes for all/,
  );
  const big = dataUrl("image/png", pngBytes(5000, 5000));
  assert.deepEqual(
    parseRequestImages(fields(5, big)).map((i) => [i.width, i.height]),
    new Array(5).fill([5000, 5000]),
  );
  tooLarge(
    () => parseRequestImages(fields(6, big)),
    "input_images[5]",
    /\(5000x5000 = 25000000 pixels\) brings this request's images to 150000000 pixels; the limit is 134217728 pixels for all/,
  );
  // Each image is checked, and the sizes are counted, in order: a bad one first is named first.
  assert.throws(
    () =>
      parseRequestImages([{ url: "data:image/png;base64,@@@@", param: "a" }, ...fields(9, big)]),
    (e: unknown) => e instanceof ApiError && e.param === "a" && /valid base64/.test(e.message),
  );
});
