import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { inspectImage, parseImageDataUrl } from "../../src/http/image_data_url.ts";

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
