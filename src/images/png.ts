/**
 * A PNG decoder: every colour type (gray, RGB, palette, gray+alpha, RGBA), every bit depth the
 * PNG specification allows (1, 2, 4, 8, 16), all five filter types, Adam7 interlacing, and
 * `tRNS` transparency. Output is 8-bit RGBA. Inflation uses the built-in DecompressionStream.
 */
import { concatBytes } from "../http/bytes.ts";

/** A decoded image: 8-bit RGBA, row by row. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Why a PNG could not be decoded. */
export class PngError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PngError";
  }
}

/** Options for {@link decodePng}. */
export interface PngOptions {
  /** Largest width × height accepted; default 64 megapixels. */
  maxPixels?: number;
}

/** One chunk of a PNG file. */
export interface PngChunk {
  type: string;
  data: Uint8Array;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Whether the bytes start with the PNG signature. */
export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 as PNG uses it (over a chunk's type and data). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The chunks of a PNG file up to IEND, each checked against its CRC. */
export function readChunks(bytes: Uint8Array): PngChunk[] {
  if (!isPng(bytes)) throw new PngError("not a PNG file (bad signature)");
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: PngChunk[] = [];
  let pos = 8;
  for (;;) {
    if (pos + 12 > bytes.length) throw new PngError("the file ends before its IEND chunk");
    const length = dv.getUint32(pos);
    if (length > 0x7fffffff || pos + 12 + length > bytes.length) {
      throw new PngError("a chunk runs past the end of the file");
    }
    const typeAndData = bytes.subarray(pos + 4, pos + 8 + length);
    const type = String.fromCharCode(...typeAndData.subarray(0, 4));
    if (!/^[A-Za-z]{4}$/.test(type)) throw new PngError("malformed chunk type");
    if (crc32(typeAndData) !== dv.getUint32(pos + 8 + length)) {
      throw new PngError(`CRC mismatch in the ${type} chunk`);
    }
    chunks.push({ type, data: typeAndData.subarray(4) });
    pos += 12 + length;
    if (type === "IEND") return chunks;
  }
}

/** Compressed bytes fed to the inflater at a time. Deflate expands at most ~1032:1, so no single
 * output chunk passes ~4 MiB. (1 KiB slices took 1.5× as long to inflate a 40 MB image.) */
const INFLATE_SLICE = 4096;

/**
 * Inflates zlib data (RFC 1950) with the built-in DecompressionStream, keeping at most `limit`
 * bytes: the input goes in small slices and reading stops at the limit, so a decompression bomb
 * costs no more memory than the limit plus one slice's output.
 */
export async function inflate(data: Uint8Array, limit: number): Promise<Uint8Array> {
  const { readable, writable } = new DecompressionStream("deflate");
  const reader = readable.getReader();
  const feeding = feed(writable.getWriter(), data).catch(() => {}); // errors reach the reader
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.length <= limit - total ? value : value.slice(0, limit - total);
      parts.push(part);
      total += part.length;
    }
  } catch (cause) {
    throw new PngError("corrupt compressed image data", { cause });
  } finally {
    await reader.cancel().catch(() => {});
    await feeding;
  }
  return concatBytes(parts);
}

async function feed(writer: WritableStreamDefaultWriter<BufferSource>, data: Uint8Array) {
  for (let i = 0; i < data.length; i += INFLATE_SLICE) {
    await writer.write(data.subarray(i, i + INFLATE_SLICE) as Uint8Array<ArrayBuffer>);
  }
  await writer.close();
}

interface Header {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlaced: boolean;
  /** Samples per pixel. */
  samples: number;
  /** Bits per pixel. */
  bpp: number;
}

const SAMPLES: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

function readHeader(data: Uint8Array): Header {
  if (data.length !== 13) throw new PngError("malformed IHDR chunk");
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = dv.getUint32(0);
  const height = dv.getUint32(4);
  const depth = data[8]!;
  const colorType = data[9]!;
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    throw new PngError(`invalid image size ${width}x${height}`);
  }
  const depths = DEPTHS[colorType];
  if (!depths) throw new PngError(`invalid colour type ${colorType}`);
  if (!depths.includes(depth)) {
    throw new PngError(`bit depth ${depth} is not allowed with colour type ${colorType}`);
  }
  if (data[10] !== 0) throw new PngError(`unknown compression method ${data[10]}`);
  if (data[11] !== 0) throw new PngError(`unknown filter method ${data[11]}`);
  if (data[12]! > 1) throw new PngError(`unknown interlace method ${data[12]}`);
  const samples = SAMPLES[colorType]!;
  return {
    width,
    height,
    depth,
    colorType,
    interlaced: data[12] === 1,
    samples,
    bpp: samples * depth,
  };
}

/** Adam7 passes: x start, y start, x step, y step. */
export const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** A reduced image of one pass: where its pixels go in the full image. */
interface Pass {
  width: number;
  height: number;
  x0: number;
  y0: number;
  dx: number;
  dy: number;
}

function passesOf(h: Header): Pass[] {
  if (!h.interlaced) return [{ width: h.width, height: h.height, x0: 0, y0: 0, dx: 1, dy: 1 }];
  return ADAM7.map(([x0, y0, dx, dy]) => ({
    width: Math.ceil((h.width - x0) / dx),
    height: Math.ceil((h.height - y0) / dy),
    x0,
    y0,
    dx,
    dy,
  })).filter((p) => p.width > 0 && p.height > 0);
}

const rowBytes = (width: number, bpp: number) => Math.ceil((width * bpp) / 8);

/** Reverses the scanline filters of one pass in place; returns the offset after it. */
function unfilter(raw: Uint8Array, start: number, pass: Pass, bpp: number): number {
  const stride = rowBytes(pass.width, bpp);
  const unit = Math.max(1, bpp >> 3);
  let prev = -1;
  let pos = start;
  for (let y = 0; y < pass.height; y++) {
    const filter = raw[pos]!;
    const row = pos + 1;
    switch (filter) {
      case 0:
        break;
      case 1:
        for (let i = unit; i < stride; i++) raw[row + i] = raw[row + i]! + raw[row + i - unit]!;
        break;
      case 2:
        if (prev >= 0) {
          for (let i = 0; i < stride; i++) raw[row + i] = raw[row + i]! + raw[prev + i]!;
        }
        break;
      case 3:
        for (let i = 0; i < stride; i++) {
          const left = i >= unit ? raw[row + i - unit]! : 0;
          const up = prev >= 0 ? raw[prev + i]! : 0;
          raw[row + i] = raw[row + i]! + ((left + up) >> 1);
        }
        break;
      case 4:
        for (let i = 0; i < stride; i++) {
          const a = i >= unit ? raw[row + i - unit]! : 0;
          const b = prev >= 0 ? raw[prev + i]! : 0;
          const c = i >= unit && prev >= 0 ? raw[prev + i - unit]! : 0;
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          raw[row + i] = raw[row + i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
        }
        break;
      default:
        throw new PngError(`unknown filter type ${filter} on row ${y}`);
    }
    prev = row;
    pos = row + stride;
  }
  return pos;
}

/** Transparency and palette, prepared for the pixel conversion. */
interface Colours {
  /** RGBA per palette index. */
  palette: Uint8Array | null;
  paletteSize: number;
  /** The raw sample values (gray, or r g b) that are fully transparent; `null` for none. */
  transparent: number[] | null;
}

function readColours(h: Header, chunks: PngChunk[]): Colours {
  const plte = chunks.find((c) => c.type === "PLTE");
  const trns = chunks.find((c) => c.type === "tRNS");
  let palette: Uint8Array | null = null;
  let paletteSize = 0;
  if (h.colorType === 3) {
    if (!plte) throw new PngError("a palette image has no PLTE chunk");
    if (plte.data.length % 3 !== 0 || plte.data.length === 0 || plte.data.length > 768) {
      throw new PngError("malformed PLTE chunk");
    }
    paletteSize = plte.data.length / 3;
    palette = new Uint8Array(256 * 4);
    for (let i = 0; i < paletteSize; i++) {
      palette[i * 4] = plte.data[i * 3]!;
      palette[i * 4 + 1] = plte.data[i * 3 + 1]!;
      palette[i * 4 + 2] = plte.data[i * 3 + 2]!;
      palette[i * 4 + 3] = trns && i < trns.data.length ? trns.data[i]! : 255;
    }
  }
  let transparent: number[] | null = null;
  if (trns && (h.colorType === 0 || h.colorType === 2)) {
    const count = h.colorType === 0 ? 1 : 3;
    if (trns.data.length !== count * 2) throw new PngError("malformed tRNS chunk");
    const dv = new DataView(trns.data.buffer, trns.data.byteOffset, trns.data.byteLength);
    transparent = Array.from({ length: count }, (_, i) => dv.getUint16(i * 2));
  }
  return { palette, paletteSize, transparent };
}

/** Writes one pass's unfiltered rows into the RGBA output. */
function expand(
  raw: Uint8Array,
  start: number,
  pass: Pass,
  h: Header,
  colours: Colours,
  out: Uint8Array,
): void {
  const stride = rowBytes(pass.width, h.bpp);
  const { depth, colorType, samples } = h;
  const max = (1 << depth) - 1;
  const scale = depth < 8 ? 255 / max : 1;
  const wide = depth === 16;
  const { palette, paletteSize, transparent } = colours;
  for (let py = 0; py < pass.height; py++) {
    const row = start + py * (stride + 1) + 1;
    let o = ((pass.y0 + py * pass.dy) * h.width + pass.x0) * 4;
    const step = pass.dx * 4;
    for (let px = 0; px < pass.width; px++, o += step) {
      if (depth < 8) {
        const bit = px * depth;
        const v = (raw[row + (bit >> 3)]! >> (8 - depth - (bit & 7))) & max;
        if (colorType === 3) {
          if (v >= paletteSize) throw new PngError(`palette index ${v} is out of range`);
          out.set(palette!.subarray(v * 4, v * 4 + 4), o);
        } else {
          const g = Math.round(v * scale);
          out[o] = out[o + 1] = out[o + 2] = g;
          out[o + 3] = transparent && v === transparent[0] ? 0 : 255;
        }
        continue;
      }
      const p = row + px * samples * (wide ? 2 : 1);
      // Raw sample i (8 or 16 bits) and its 8-bit value.
      const rawAt = (i: number) =>
        wide ? (raw[p + 2 * i]! << 8) | raw[p + 2 * i + 1]! : raw[p + i]!;
      const at = (i: number) => wide ? Math.round(rawAt(i) / 257) : raw[p + i]!;
      switch (colorType) {
        case 0: {
          out[o] = out[o + 1] = out[o + 2] = at(0);
          out[o + 3] = transparent && rawAt(0) === transparent[0] ? 0 : 255;
          break;
        }
        case 2: {
          out[o] = at(0);
          out[o + 1] = at(1);
          out[o + 2] = at(2);
          const clear = transparent !== null && rawAt(0) === transparent[0] &&
            rawAt(1) === transparent[1] && rawAt(2) === transparent[2];
          out[o + 3] = clear ? 0 : 255;
          break;
        }
        case 3: {
          const v = raw[p]!;
          if (v >= paletteSize) throw new PngError(`palette index ${v} is out of range`);
          out.set(palette!.subarray(v * 4, v * 4 + 4), o);
          break;
        }
        case 4:
          out[o] = out[o + 1] = out[o + 2] = at(0);
          out[o + 3] = at(1);
          break;
        default:
          out[o] = at(0);
          out[o + 1] = at(1);
          out[o + 2] = at(2);
          out[o + 3] = at(3);
      }
    }
  }
}

/** Decodes a PNG file to 8-bit RGBA; throws {@link PngError} saying what is wrong. */
export async function decodePng(bytes: Uint8Array, options: PngOptions = {}): Promise<RgbaImage> {
  const chunks = readChunks(bytes);
  if (chunks[0]?.type !== "IHDR") throw new PngError("the first chunk is not IHDR");
  const h = readHeader(chunks[0].data);
  const maxPixels = options.maxPixels ?? 64 * 1024 * 1024;
  if (h.width * h.height > maxPixels) {
    throw new PngError(`${h.width}x${h.height} is larger than the limit of ${maxPixels} pixels`);
  }
  for (const chunk of chunks) {
    const critical = chunk.type.charCodeAt(0) < 0x61;
    if (critical && !["IHDR", "PLTE", "IDAT", "IEND"].includes(chunk.type)) {
      throw new PngError(`unsupported critical chunk ${chunk.type}`);
    }
  }
  const colours = readColours(h, chunks);
  const idat = chunks.filter((c) => c.type === "IDAT");
  if (idat.length === 0) throw new PngError("no IDAT chunk");
  const compressed = new Uint8Array(idat.reduce((n, c) => n + c.data.length, 0));
  let offset = 0;
  for (const c of idat) {
    compressed.set(c.data, offset);
    offset += c.data.length;
  }
  const passes = passesOf(h);
  const expected = passes.reduce((n, p) => n + p.height * (rowBytes(p.width, h.bpp) + 1), 0);
  const raw = await inflate(compressed, expected);
  if (raw.length < expected) throw new PngError("the image data is cut short");

  const out = new Uint8Array(h.width * h.height * 4);
  let pos = 0;
  for (const pass of passes) {
    const start = pos;
    pos = unfilter(raw, start, pass, h.bpp);
    expand(raw, start, pass, h, colours, out);
  }
  return { width: h.width, height: h.height, data: out };
}
