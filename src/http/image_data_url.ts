import { DEFAULT_IMAGE_CAPS } from "../config/limits.ts";
import type { LimitsConfig } from "../config/types.ts";
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

/** Caps on input images, per image and for all images of one request (`Config.limits`). */
export type ImageCaps = Pick<
  LimitsConfig,
  "max_image_pixels" | "max_image_bytes" | "max_request_image_pixels" | "max_request_image_bytes"
>;

/** No caps: for images a front door already held to the configured ones (an adapter reading
 * them again must not refuse what the operator allowed). */
export const UNCAPPED: Readonly<ImageCaps> = {
  max_image_pixels: Infinity,
  max_image_bytes: Infinity,
  max_request_image_pixels: Infinity,
  max_request_image_bytes: Infinity,
};

/** An image data URL of a request, and the parameter that carries it. */
export interface ImageField {
  url: string;
  param: string;
}

const MEDIA_TYPES: Record<ImageFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** A media type is at most 64 characters after `image/`, so that an error can quote it. */
const DATA_URL = /^data:(image\/[a-z0-9.+-]{1,64})(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;

/**
 * Decodes a base64 image data URL and checks that it holds a real PNG, JPEG, GIF or WebP
 * image (magic bytes, and dimensions from its header) within the per-image caps. Throws a 400
 * naming `param`.
 */
export function parseImageDataUrl(
  url: unknown,
  param: string,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ImageInfo {
  if (typeof url !== "string") {
    throw invalidRequest(`${param} must be a string (a base64 image data URL).`, param);
  }
  return parseRequestImages([{ url, param }], caps)[0]!;
}

/**
 * Decodes and checks every image data URL of one request (see {@link parseImageDataUrl}),
 * each within the per-image caps and all together within the per-request caps. Sizes are
 * checked before anything large is decoded. Throws a 400 naming the first field that fails.
 */
export function parseRequestImages(
  fields: readonly ImageField[],
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ImageInfo[] {
  let bytesBefore = 0;
  let pixelsBefore = 0;
  return fields.map(({ url, param }) => {
    const { declared, base64 } = splitDataUrl(url, param);
    const bytes = decodedLength(base64);
    checkCap(param, `${bytes} bytes`, "bytes", {
      size: bytes,
      before: bytesBefore,
      perImage: caps.max_image_bytes,
      perRequest: caps.max_request_image_bytes,
    });
    const info = inspectImage(decodeBase64(base64, param));
    if (!info) {
      throw invalidRequest(
        `${param} is not a PNG, JPEG, GIF or WebP image (its bytes do not start like one, or its header is cut short).`,
        param,
        "invalid_image",
      );
    }
    if (
      declared !== MEDIA_TYPES[info.format] && !(info.format === "jpeg" && declared === "image/jpg")
    ) {
      throw invalidRequest(
        `${param} says ${declared} but holds a ${info.format.toUpperCase()} image.`,
        param,
        "invalid_image",
      );
    }
    const pixels = info.width * info.height;
    checkCap(param, `${info.width}x${info.height} = ${pixels} pixels`, "pixels", {
      size: pixels,
      before: pixelsBefore,
      perImage: caps.max_image_pixels,
      perRequest: caps.max_request_image_pixels,
    });
    bytesBefore += bytes;
    pixelsBefore += pixels;
    return { ...info, mediaType: MEDIA_TYPES[info.format], base64, bytes };
  });
}

/** The declared media type (lower case) and the base64 payload (whitespace removed). */
function splitDataUrl(url: string, param: string): { declared: string; base64: string } {
  const match = DATA_URL.exec(url);
  if (!match) {
    const hint = /^https?:/i.test(url)
      ? " Remote image URLs are not fetched; send the image inline as data:image/png;base64,\u2026"
      : "";
    throw invalidRequest(
      `${param} must be a base64 image data URL like data:image/png;base64,\u2026.${hint}`,
      param,
      "invalid_image",
    );
  }
  const base64 = url.slice(match[0].length).replace(/\s+/g, "");
  if (base64.length === 0 || base64.length % 4 === 1) throw invalidBase64(param);
  return { declared: match[1]!.toLowerCase(), base64 };
}

/** Bytes that base64 text decodes to, without decoding it. */
export function decodedLength(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function decodeBase64(base64: string, param: string): Uint8Array {
  try {
    return Uint8Array.fromBase64(base64);
  } catch {
    throw invalidBase64(param);
  }
}

function invalidBase64(param: string) {
  return invalidRequest(`${param} does not contain valid base64 data.`, param, "invalid_image");
}

/** One image's size against its per-image cap and, added to the images before it, the
 * per-request cap. */
interface Measure {
  size: number;
  before: number;
  perImage: number;
  perRequest: number;
}

function checkCap(param: string, described: string, unit: string, m: Measure): void {
  if (m.size > m.perImage) {
    throw invalidRequest(
      `${param} is too large: ${described}; the limit is ${m.perImage} ${unit} per image.`,
      param,
      "image_too_large",
    );
  }
  if (m.before + m.size > m.perRequest) {
    throw invalidRequest(
      `${param} (${described}) brings this request's images to ${
        m.before + m.size
      } ${unit}; the limit is ${m.perRequest} ${unit} for all images of a request.`,
      param,
      "image_too_large",
    );
  }
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
