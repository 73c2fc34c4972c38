import assert from "node:assert/strict";
import { encodeJpeg } from "../../src/images/jpeg.ts";
import { embeddedText } from "../../src/images/metadata.ts";
import { measured, textBombPng } from "../support/bombs.ts";
import { gifWithComment, jpegWithComment, pngWithText } from "../support/image_fixtures.ts";

const MB = 1024 * 1024;

Deno.test("embeddedText: PNG tEXt and uncompressed iTXt chunks; compressed zTXt is skipped", async () => {
  assert.deepEqual(embeddedText(await pngWithText("plain words", "tEXt")), ["plain words"]);
  assert.deepEqual(embeddedText(await pngWithText("ünïcödé wörds", "iTXt")), ["ünïcödé wörds"]);
  assert.deepEqual(embeddedText(await pngWithText("squeezed words", "zTXt")), []);
  assert.deepEqual(embeddedText(await pngWithText(null)), []);
});

Deno.test("embeddedText: a zTXt or compressed iTXt bomb (200 MB of zeros) is never inflated", async () => {
  for (const kind of ["zTXt", "iTXt"] as const) {
    const bomb = await textBombPng(200 * MB, kind);
    assert.ok(bomb.length < MB, `the ${kind} bomb is ${bomb.length} bytes`);
    const { result: texts, growth } = await measured(() => embeddedText(bomb));
    assert.deepEqual(texts, []);
    assert.ok(growth < 100 * MB, `${kind}: RSS grew by ${(growth / MB).toFixed(0)} MB`);
  }
});

Deno.test("embeddedText: at most 64 Ki characters in all, however long the texts", async () => {
  const long = "a".repeat(100_000);
  assert.deepEqual(embeddedText(await pngWithText(long)), [long.slice(0, 65_536)]);
  assert.deepEqual(embeddedText(await pngWithText("é".repeat(100_000), "iTXt")), [
    "é".repeat(65_536),
  ]);
  assert.deepEqual(embeddedText(gifWithComment(long)), [long.slice(0, 65_536)]);
});

Deno.test("embeddedText: JPEG comments and GIF comment extensions", () => {
  assert.deepEqual(embeddedText(jpegWithComment("a jpeg comment")), ["a jpeg comment"]);
  const long = "x".repeat(600); // spans several GIF sub-blocks
  assert.deepEqual(embeddedText(gifWithComment(long)), [long]);
  const plainJpeg = encodeJpeg({ width: 8, height: 8, data: new Uint8Array(256) });
  assert.deepEqual(embeddedText(plainJpeg), []);
});

Deno.test("embeddedText: broken or unknown files give no text, not an error", async () => {
  const png = await pngWithText("words");
  const broken = png.slice();
  broken[40] = broken[40]! ^ 0xff; // a CRC mismatch
  assert.deepEqual(embeddedText(broken), []);
  assert.deepEqual(embeddedText(new TextEncoder().encode("RIFF....WEBPVP8 ")), []);
  assert.deepEqual(embeddedText(new Uint8Array()), []);
});
