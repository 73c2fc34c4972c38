/**
 * Text embedded in an image file, read without decompressing anything: PNG tEXt and
 * uncompressed iTXt chunks, JPEG comments (COM) and GIF comment extensions. Compressed text
 * (zTXt, compressed iTXt) is skipped, as it could inflate to gigabytes. WebP files are not read.
 */
import { isPng, readChunks } from "./png.ts";

/** At most this many characters of embedded text are returned. */
const MAX_TEXT = 64 * 1024;

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder();

/** The first bytes of a text, enough for {@link MAX_TEXT} characters (UTF-8: <= 4 bytes each). */
const head = (text: Uint8Array) => text.subarray(0, 4 * MAX_TEXT);

function pngText(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (const { type, data } of readChunks(bytes)) {
    const nul = data.indexOf(0);
    if (nul < 0) continue;
    if (type === "tEXt") out.push(latin1.decode(head(data.subarray(nul + 1))));
    else if (type === "iTXt" && data[nul + 1] === 0) {
      const lang = data.indexOf(0, nul + 3);
      const translated = lang < 0 ? -1 : data.indexOf(0, lang + 1);
      if (translated >= 0) out.push(utf8.decode(head(data.subarray(translated + 1))));
    }
  }
  return out;
}

function jpegComments(bytes: Uint8Array): string[] {
  const out: string[] = [];
  let i = 2;
  while (i + 4 <= bytes.length && bytes[i] === 0xff) {
    const marker = bytes[i + 1]!;
    if (marker === 0xda || marker === 0xd9) break; // image data follows: no more headers
    const length = (bytes[i + 2]! << 8) | bytes[i + 3]!;
    if (marker === 0xfe) out.push(utf8.decode(bytes.subarray(i + 4, i + 2 + length)));
    i += 2 + length;
  }
  return out;
}

/** Skips GIF data sub-blocks from `i`; returns the offset after the terminator and the first
 * `keep` of their bytes. */
function subBlocks(bytes: Uint8Array, i: number, keep: number): { next: number; data: number[] } {
  const data: number[] = [];
  while (i < bytes.length) {
    const size = bytes[i]!;
    i++;
    if (size === 0) break;
    for (let k = 0; k < size && i + k < bytes.length && data.length < keep; k++) {
      data.push(bytes[i + k]!);
    }
    i += size;
  }
  return { next: i, data };
}

function gifComments(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const flags = bytes[10]!;
  let i = 13 + (flags & 0x80 ? 3 * (1 << ((flags & 7) + 1)) : 0);
  while (i < bytes.length) {
    const block = bytes[i]!;
    if (block === 0x21) {
      const label = bytes[i + 1];
      const { next, data } = subBlocks(bytes, i + 2, label === 0xfe ? MAX_TEXT : 0);
      if (label === 0xfe) out.push(latin1.decode(Uint8Array.from(data)));
      i = next;
    } else if (block === 0x2c) {
      const local = bytes[i + 9]!;
      i += 10 + (local & 0x80 ? 3 * (1 << ((local & 7) + 1)) : 0);
      i = subBlocks(bytes, i + 1, 0).next; // LZW minimum code size, then the image data
    } else break; // trailer (0x3b) or garbage
  }
  return out;
}

/** The text embedded in an image's metadata; empty when there is none or it cannot be read. */
export function embeddedText(bytes: Uint8Array): string[] {
  try {
    let texts: string[] = [];
    if (isPng(bytes)) texts = pngText(bytes);
    else if (bytes[0] === 0xff && bytes[1] === 0xd8) texts = jpegComments(bytes);
    else if (latin1.decode(bytes.subarray(0, 4)) === "GIF8") texts = gifComments(bytes);
    let budget = MAX_TEXT;
    return texts.map((t) => {
      const kept = t.slice(0, Math.max(0, budget));
      budget -= kept.length;
      return kept;
    }).filter((t) => t !== "");
  } catch {
    return [];
  }
}
