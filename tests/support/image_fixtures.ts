import { encodeJpeg } from "../../src/images/jpeg.ts";
import { concat, deflate, writePng } from "./png_writer.ts";

const encoder = new TextEncoder();

/** A base64 data URL for image bytes. */
export function dataUrl(bytes: Uint8Array, mediaType: string): string {
  return `data:${mediaType};base64,${bytes.toBase64()}`;
}

/** How a PNG carries its text: tEXt (Latin-1), zTXt (compressed) or iTXt (UTF-8). */
export type PngTextKind = "tEXt" | "zTXt" | "iTXt";

/** A 4x4 PNG with `text` in a text chunk (or no text chunk when `text` is null). */
export async function pngWithText(text: string | null, kind: PngTextKind = "tEXt") {
  const keyword = encoder.encode("Description\0");
  let data: Uint8Array | null = null;
  if (text !== null && kind === "tEXt") data = concat([keyword, encoder.encode(text)]);
  if (text !== null && kind === "zTXt") {
    data = concat([keyword, Uint8Array.of(0), await deflate(encoder.encode(text))]);
  }
  if (text !== null && kind === "iTXt") {
    // keyword, compression flag 0, method 0, language tag "en", empty translated keyword.
    data = concat([keyword, Uint8Array.of(0, 0), encoder.encode("en\0\0"), encoder.encode(text)]);
  }
  return await writePng({
    width: 4,
    height: 4,
    colorType: 2,
    depth: 8,
    samples: new Array(48).fill(90),
    chunks: data ? [{ type: kind, data }] : [],
  });
}

/** A PNG data URL carrying `text` (null: a plain picture). */
export async function pngUrl(text: string | null, kind: PngTextKind = "tEXt"): Promise<string> {
  return dataUrl(await pngWithText(text, kind), "image/png");
}

/** An 8x8 JPEG with `text` in a COM segment right after SOI. */
export function jpegWithComment(text: string): Uint8Array {
  const jpeg = encodeJpeg({ width: 8, height: 8, data: new Uint8Array(8 * 8 * 4).fill(200) });
  const body = encoder.encode(text);
  const com = Uint8Array.of(0xff, 0xfe, (body.length + 2) >> 8, (body.length + 2) & 0xff);
  return concat([jpeg.subarray(0, 2), com, body, jpeg.subarray(2)]);
}

/** A 1x1 GIF89a with `text` in a comment extension. */
export function gifWithComment(text: string): Uint8Array {
  const body = encoder.encode(text);
  const blocks: number[] = [];
  for (let i = 0; i < body.length; i += 255) {
    const part = body.subarray(i, i + 255);
    blocks.push(part.length, ...part);
  }
  // deno-fmt-ignore
  return Uint8Array.from([
    ...encoder.encode("GIF89a"),
    1, 0, 1, 0, 0x80, 0, 0, // 1x1, a global colour table of 2 entries
    0, 0, 0, 255, 255, 255,
    0x21, 0xfe, ...blocks, 0, // comment extension
    0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, // image descriptor
    2, 2, 0x44, 0x01, 0, // LZW data for one pixel
    0x3b,
  ]);
}
