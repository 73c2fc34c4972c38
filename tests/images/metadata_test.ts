import assert from "node:assert/strict";
import { encodeJpeg } from "../../src/images/jpeg.ts";
import { embeddedText } from "../../src/images/metadata.ts";
import { gifWithComment, jpegWithComment, pngWithText } from "../support/image_fixtures.ts";

Deno.test("embeddedText: PNG tEXt, zTXt and iTXt chunks", async () => {
  assert.deepEqual(await embeddedText(await pngWithText("plain words", "tEXt")), ["plain words"]);
  assert.deepEqual(await embeddedText(await pngWithText("squeezed words", "zTXt")), [
    "squeezed words",
  ]);
  assert.deepEqual(await embeddedText(await pngWithText("ünïcödé wörds", "iTXt")), [
    "ünïcödé wörds",
  ]);
  assert.deepEqual(await embeddedText(await pngWithText(null)), []);
});

Deno.test("embeddedText: JPEG comments and GIF comment extensions", async () => {
  assert.deepEqual(await embeddedText(jpegWithComment("a jpeg comment")), ["a jpeg comment"]);
  const long = "x".repeat(600); // spans several GIF sub-blocks
  assert.deepEqual(await embeddedText(gifWithComment(long)), [long]);
  const plainJpeg = encodeJpeg({ width: 8, height: 8, data: new Uint8Array(256) });
  assert.deepEqual(await embeddedText(plainJpeg), []);
});

Deno.test("embeddedText: broken or unknown files give no text, not an error", async () => {
  const png = await pngWithText("words");
  const broken = png.slice();
  broken[40] = broken[40]! ^ 0xff; // a CRC mismatch
  assert.deepEqual(await embeddedText(broken), []);
  assert.deepEqual(await embeddedText(new TextEncoder().encode("RIFF....WEBPVP8 ")), []);
  assert.deepEqual(await embeddedText(new Uint8Array()), []);
});
