import assert from "node:assert/strict";
import jpeg from "npm:jpeg-js@0.4.4";

/** The marker structure of a JPEG file, read segment by segment. */
export interface JpegStructure {
  /** Marker codes in file order (0xd8 SOI … 0xd9 EOI), scan data skipped. */
  markers: number[];
  jfif: boolean;
  frame: { marker: number; width: number; height: number; components: number[][] };
}

/** Reads a JPEG's segments and checks the scan's byte stuffing; throws on malformed files. */
export function jpegStructure(bytes: Uint8Array): JpegStructure {
  assert.equal(bytes[0], 0xff, "SOI");
  assert.equal(bytes[1], 0xd8, "SOI");
  assert.equal(bytes[bytes.length - 2], 0xff, "EOI");
  assert.equal(bytes[bytes.length - 1], 0xd9, "EOI");
  const markers = [0xd8];
  let jfif = false;
  let frame: JpegStructure["frame"] | null = null;
  let i = 2;
  while (i < bytes.length) {
    assert.equal(bytes[i], 0xff, `a marker at byte ${i}`);
    const marker = bytes[i + 1]!;
    markers.push(marker);
    if (marker === 0xd9) {
      assert.equal(i + 2, bytes.length, "nothing after EOI");
      break;
    }
    const length = (bytes[i + 2]! << 8) | bytes[i + 3]!;
    const body = bytes.subarray(i + 4, i + 2 + length);
    if (marker === 0xe0) jfif = String.fromCharCode(...body.subarray(0, 5)) === "JFIF\0";
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      const components = [];
      for (let c = 0; c < body[5]!; c++) {
        components.push(Array.from(body.subarray(6 + c * 3, 9 + c * 3)));
      }
      frame = {
        marker,
        height: (body[1]! << 8) | body[2]!,
        width: (body[3]! << 8) | body[4]!,
        components,
      };
    }
    i += 2 + length;
    if (marker === 0xda) {
      // Entropy-coded data: every 0xFF is followed by 0x00 (stuffing) until the next marker.
      while (!(bytes[i] === 0xff && bytes[i + 1] !== 0x00)) {
        assert.ok(i < bytes.length, "scan data runs to the end of the file");
        i += bytes[i] === 0xff ? 2 : 1;
      }
    }
  }
  assert.ok(frame, "a start-of-frame segment");
  return { markers, jfif, frame };
}

/** Checks that bytes are a baseline JFIF image of the given size and decodes it fully. */
export function checkJpeg(
  bytes: Uint8Array,
  width: number,
  height: number,
): { width: number; height: number; data: Uint8Array } {
  const structure = jpegStructure(bytes);
  assert.ok(structure.jfif, "an APP0 JFIF segment");
  assert.equal(structure.frame.marker, 0xc0, "a baseline (SOF0) frame");
  assert.equal(structure.frame.width, width, "frame width");
  assert.equal(structure.frame.height, height, "frame height");
  const decoded = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  assert.equal(decoded.width, width);
  assert.equal(decoded.height, height);
  return { width: decoded.width, height: decoded.height, data: decoded.data };
}

/** Decodes a `data:image/jpeg;base64,…` URL into bytes (asserting the prefix). */
export function jpegFromDataUrl(url: string): Uint8Array {
  const prefix = "data:image/jpeg;base64,";
  assert.ok(url.startsWith(prefix), `a JPEG data URL, got ${url.slice(0, 40)}…`);
  return Uint8Array.fromBase64(url.slice(prefix.length));
}
