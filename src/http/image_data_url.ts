import { invalidRequest } from "../errors.ts";

/** Image formats accepted as input (spec: base64 image data URLs). */
export type ImageFormat = "png" | "jpeg" | "gif" | "webp";

/** A decoded, checked image data URL. */
export interface ImageInfo {
  format: ImageFormat;
  /** The media type from the data URL, e.g. `image/png`. */
  mediaType: string;
  /** The base64 payload as sent (for forwarding upstream without re-encoding). */
  base64: string;
  /** Decoded size in bytes. */
  bytes: number;
  width: number;
  height: number;
}

const MEDIA_TYPES: Record<ImageFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

const DATA_URL = /^data:(image\/[a-z0-9.+-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes a base64 image data URL and checks that it holds a real PNG, JPEG, GIF or WebP
 * image (magic bytes, and dimensions from its header). Throws a 400 naming `param`.
 */
export function parseImageDataUrl(url: unknown, param: string): ImageInfo {
  if (typeof url !== "string") {
    throw invalidRequest(`${param} must be a string (a base64 image data URL).`, param);
  }
  const match = DATA_URL.exec(url);
  if (!match) {
    const hint = /^https?:/i.test(url)
      ? " Remote image URLs are not fetched; send the image inline as data:image/png;base64,…"
      : "";
    throw invalidRequest(
      `${param} must be a base64 image data URL like data:image/png;base64,….${hint}`,
      param,
      "invalid_image",
    );
  }
  const base64 = url.slice(match[0].length).replace(/\s+/g, "");
  if (base64.length === 0 || base64.length % 4 === 1 || !BASE64.test(base64)) {
    throw invalidRequest(`${param} does not contain valid base64 data.`, param, "invalid_image");
  }
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {
    throw invalidRequest(`${param} does not contain valid base64 data.`, param, "invalid_image");
  }
  const info = inspectImage(bytes);
  if (!info) {
    throw invalidRequest(
      `${param} is not a PNG, JPEG, GIF or WebP image (its bytes do not start like one, or its header is cut short).`,
      param,
      "invalid_image",
    );
  }
  const declared = match[1]!.toLowerCase();
  if (
    declared !== MEDIA_TYPES[info.format] && !(info.format === "jpeg" && declared === "image/jpg")
  ) {
    throw invalidRequest(
      `${param} says ${declared} but holds a ${info.format.toUpperCase()} image.`,
      param,
      "invalid_image",
    );
  }
  return { ...info, mediaType: MEDIA_TYPES[info.format], base64, bytes: bytes.length };
}

/** Format and dimensions of an image from its first bytes, or `null` if it is none we accept. */
export function inspectImage(
  b: Uint8Array,
): { format: ImageFormat; width: number; height: number } | null {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // PNG: signature, then the IHDR chunk with width and height (big-endian).
  if (
    b.length >= 24 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 &&
    b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a
  ) {
    if (String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!) !== "IHDR") return null;
    return sized("png", dv.getUint32(16), dv.getUint32(20));
  }
  // GIF: "GIF87a" or "GIF89a", then the logical screen size (little-endian).
  if (b.length >= 10 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) {
    if ((b[4] !== 0x37 && b[4] !== 0x39) || b[5] !== 0x61) return null;
    return sized("gif", dv.getUint16(6, true), dv.getUint16(8, true));
  }
  // JPEG: SOI, then segments until a start-of-frame marker carrying the size.
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpegSize(b, dv);
  // WebP: RIFF....WEBP with a VP8, VP8L or VP8X chunk.
  if (
    b.length >= 30 && String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!) === "RIFF" &&
    String.fromCharCode(b[8]!, b[9]!, b[10]!, b[11]!) === "WEBP"
  ) {
    const chunk = String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!);
    if (chunk === "VP8 ") {
      if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
      return sized("webp", dv.getUint16(26, true) & 0x3fff, dv.getUint16(28, true) & 0x3fff);
    }
    if (chunk === "VP8L") {
      if (b[20] !== 0x2f) return null;
      const bits = dv.getUint32(21, true);
      return sized("webp", (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    if (chunk === "VP8X") {
      const w = 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16));
      const h = 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16));
      return sized("webp", w, h);
    }
    return null;
  }
  return null;
}

function sized(format: ImageFormat, width: number, height: number) {
  if (width <= 0 || height <= 0) return null;
  return { format, width, height };
}

function jpegSize(b: Uint8Array, dv: DataView) {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const length = dv.getUint16(i + 2);
    if (length < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
      marker !== 0xcc;
    if (isFrame) return sized("jpeg", dv.getUint16(i + 7), dv.getUint16(i + 5));
    i += 2 + length;
  }
  return null;
}
