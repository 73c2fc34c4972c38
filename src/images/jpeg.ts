/**
 * A baseline JFIF (JPEG) encoder: YCbCr colour, 8x8 float DCT (Arai-Agui-Nakajima), the
 * ITU-T T.81 Annex K quantisation tables scaled by quality, and the Annex K Huffman tables.
 * Chroma is subsampled 4:2:0 (default) or kept at 4:4:4.
 */

/** Pixels to encode: `channels` bytes per pixel, row by row (RGB or RGBA; alpha is ignored). */
export interface RasterImage {
  width: number;
  height: number;
  data: Uint8Array | Uint8ClampedArray;
  /** 4 (RGBA, the default) or 3 (RGB). */
  channels?: 3 | 4;
}

/** Options for {@link encodeJpeg}. */
export interface JpegOptions {
  /** 1-100, as in libjpeg; default 85. */
  quality?: number;
  /** Chroma subsampling; default "4:2:0". */
  subsampling?: "4:2:0" | "4:4:4";
}

/** Zigzag position -> natural (row-major) index within an 8x8 block. */
// deno-fmt-ignore
const ZIGZAG = Uint8Array.from([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
  35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
  58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
]);

/** Annex K.1 luminance quantisation table, natural order. */
// deno-fmt-ignore
const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61,
  12, 12, 14, 19, 26, 58, 60, 55,
  14, 13, 16, 24, 40, 57, 69, 56,
  14, 17, 22, 29, 51, 87, 80, 62,
  18, 22, 37, 56, 68, 109, 103, 77,
  24, 35, 55, 64, 81, 104, 113, 92,
  49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
];

/** Annex K.1 chrominance quantisation table, natural order. */
// deno-fmt-ignore
const CHROMA_QUANT = [
  17, 18, 24, 47, 99, 99, 99, 99,
  18, 21, 26, 66, 99, 99, 99, 99,
  24, 26, 56, 99, 99, 99, 99, 99,
  47, 66, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99,
];

/** A Huffman table as it is written in a DHT segment: code counts per length 1-16, symbols. */
interface HuffmanSpec {
  counts: number[];
  symbols: number[];
}

const DC_LUMA: HuffmanSpec = {
  counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
  symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};

const DC_CHROMA: HuffmanSpec = {
  counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
  symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};

// deno-fmt-ignore
const AC_LUMA: HuffmanSpec = {
  counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
  symbols: [
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
    0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
    0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
    0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
    0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
    0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
    0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
    0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
    0xf9, 0xfa,
  ],
};

// deno-fmt-ignore
const AC_CHROMA: HuffmanSpec = {
  counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
  symbols: [
    0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
    0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
    0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
    0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
    0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
    0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
    0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
    0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
    0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
    0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
    0xf9, 0xfa,
  ],
};

/** Canonical codes from a table spec: `codes[symbol]`, `lengths[symbol]` (0 = no code). */
interface HuffmanCodes {
  codes: Uint16Array;
  lengths: Uint8Array;
}

function buildCodes(spec: HuffmanSpec): HuffmanCodes {
  const codes = new Uint16Array(256);
  const lengths = new Uint8Array(256);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    for (let i = 0; i < spec.counts[len - 1]!; i++) {
      const symbol = spec.symbols[k++]!;
      codes[symbol] = code++;
      lengths[symbol] = len;
    }
    code <<= 1;
  }
  return { codes, lengths };
}

const CODES = {
  dcLuma: buildCodes(DC_LUMA),
  acLuma: buildCodes(AC_LUMA),
  dcChroma: buildCodes(DC_CHROMA),
  acChroma: buildCodes(AC_CHROMA),
};

/** AAN scale factors: cos(k·pi/16)·sqrt2 for k > 0. */
const AAN_SCALE = [
  1.0,
  1.387039845,
  1.306562965,
  1.175875602,
  1.0,
  0.785694958,
  0.5411961,
  0.275899379,
];

/** The quantisation table for a quality (natural order), as written to DQT. */
function scaleTable(base: readonly number[], quality: number): Uint8Array {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const scale = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  return Uint8Array.from(
    base,
    (v) => Math.min(255, Math.max(1, Math.floor((v * scale + 50) / 100))),
  );
}

/** Reciprocal divisors that fold the AAN output scaling into quantisation (natural order). */
function divisors(table: Uint8Array): Float32Array {
  const out = new Float32Array(64);
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      const k = row * 8 + col;
      out[k] = 1 / (table[k]! * AAN_SCALE[row]! * AAN_SCALE[col]! * 8);
    }
  }
  return out;
}

/** In-place forward DCT of an 8x8 block (natural order), output scaled as AAN leaves it. */
function forwardDct(d: Float32Array): void {
  for (let pass = 0; pass < 2; pass++) {
    // Pass 0 transforms the rows, pass 1 the columns.
    const step = pass === 0 ? 1 : 8;
    const next = pass === 0 ? 8 : 1;
    for (let line = 0, o = 0; line < 8; line++, o += next) {
      const d0 = d[o]!, d1 = d[o + step]!, d2 = d[o + 2 * step]!, d3 = d[o + 3 * step]!;
      const d4 = d[o + 4 * step]!, d5 = d[o + 5 * step]!, d6 = d[o + 6 * step]!;
      const d7 = d[o + 7 * step]!;
      const t0 = d0 + d7, t7 = d0 - d7, t1 = d1 + d6, t6 = d1 - d6;
      const t2 = d2 + d5, t5 = d2 - d5, t3 = d3 + d4, t4 = d3 - d4;

      const t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
      d[o] = t10 + t11;
      d[o + 4 * step] = t10 - t11;
      const z1 = (t12 + t13) * 0.707106781;
      d[o + 2 * step] = t13 + z1;
      d[o + 6 * step] = t13 - z1;

      const o10 = t4 + t5, o11 = t5 + t6, o12 = t6 + t7;
      const z5 = (o10 - o12) * 0.382683433;
      const z2 = 0.5411961 * o10 + z5;
      const z4 = 1.306562965 * o12 + z5;
      const z3 = o11 * 0.707106781;
      const z11 = t7 + z3, z13 = t7 - z3;
      d[o + 5 * step] = z13 + z2;
      d[o + 3 * step] = z13 - z2;
      d[o + step] = z11 + z4;
      d[o + 7 * step] = z11 - z4;
    }
  }
}

/** A growable byte buffer with a bit writer that stuffs 0x00 after every 0xFF in scan data. */
class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  #bits = 0;
  #count = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + extra));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  word(w: number): void {
    this.byte(w >> 8);
    this.byte(w & 0xff);
  }

  bytes(list: ArrayLike<number>): void {
    this.ensure(list.length);
    this.buf.set(list, this.pos);
    this.pos += list.length;
  }

  /** Appends `length` (<= 16) bits of `value`; the caller has ensured room. */
  bits(value: number, length: number): void {
    this.#bits = (this.#bits << length) | value;
    this.#count += length;
    while (this.#count >= 8) {
      this.#count -= 8;
      const b = (this.#bits >>> this.#count) & 0xff;
      this.buf[this.pos++] = b;
      if (b === 0xff) this.buf[this.pos++] = 0;
    }
    this.#bits &= (1 << this.#count) - 1;
  }

  /** Pads the last scan byte with 1 bits. */
  flushBits(): void {
    if (this.#count > 0) this.bits((1 << (8 - this.#count)) - 1, 8 - this.#count);
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

function writeHeaders(
  w: ByteWriter,
  width: number,
  height: number,
  luma: Uint8Array,
  chroma: Uint8Array,
  sampling: number,
): void {
  w.bytes([0xff, 0xd8]); // SOI
  // APP0 JFIF 1.01, no density units (aspect 1:1), no thumbnail.
  w.bytes([0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  // DQT: both tables, 8-bit precision, zigzag order.
  w.bytes([0xff, 0xdb]);
  w.word(2 + 2 * 65);
  for (const [id, table] of [[0, luma], [1, chroma]] as const) {
    w.byte(id);
    for (let i = 0; i < 64; i++) w.byte(table[ZIGZAG[i]!]!);
  }
  // SOF0: baseline, 8-bit samples, three components.
  w.bytes([0xff, 0xc0]);
  w.word(17);
  w.byte(8);
  w.word(height);
  w.word(width);
  w.byte(3);
  w.bytes([1, (sampling << 4) | sampling, 0, 2, 0x11, 1, 3, 0x11, 1]);
  // DHT: the four standard tables.
  w.bytes([0xff, 0xc4]);
  const specs = [[0x00, DC_LUMA], [0x10, AC_LUMA], [0x01, DC_CHROMA], [0x11, AC_CHROMA]] as const;
  w.word(2 + specs.reduce((n, [, s]) => n + 17 + s.symbols.length, 0));
  for (const [klass, spec] of specs) {
    w.byte(klass);
    w.bytes(spec.counts);
    w.bytes(spec.symbols);
  }
  // SOS: all three components in one interleaved scan.
  w.bytes([0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
}

/** Colour planes padded to whole MCUs, level-shifted by -128. */
interface Planes {
  y: Float32Array;
  cb: Float32Array;
  cr: Float32Array;
  /** Row stride of the luma plane, and of the chroma planes. */
  yStride: number;
  cStride: number;
}

function toPlanes(image: RasterImage, mcu: number, sampling: number): Planes {
  const { width, height, data } = image;
  const ch = image.channels ?? 4;
  const yStride = Math.ceil(width / mcu) * mcu;
  const yRows = Math.ceil(height / mcu) * mcu;
  const cStride = yStride / sampling;
  const cRows = yRows / sampling;
  const y = new Float32Array(yStride * yRows);
  const cb = new Float32Array(cStride * cRows);
  const cr = new Float32Array(cStride * cRows);
  const inv = 1 / (sampling * sampling);
  for (let row = 0; row < yRows; row++) {
    const sy = row < height ? row : height - 1;
    const yOff = row * yStride;
    const cOff = ((row / sampling) | 0) * cStride;
    for (let col = 0; col < yStride; col++) {
      const sx = col < width ? col : width - 1;
      const p = (sy * width + sx) * ch;
      const r = data[p]!, g = data[p + 1]!, b = data[p + 2]!;
      y[yOff + col] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
      const c = cOff + ((col / sampling) | 0);
      cb[c] = cb[c]! + (-0.168736 * r - 0.331264 * g + 0.5 * b) * inv;
      cr[c] = cr[c]! + (0.5 * r - 0.418688 * g - 0.081312 * b) * inv;
    }
  }
  return { y, cb, cr, yStride, cStride };
}

/** Encodes pixels as a baseline JFIF file. */
export function encodeJpeg(image: RasterImage, options: JpegOptions = {}): Uint8Array {
  const { width, height } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`JPEG size must be positive integers, not ${width}x${height}`);
  }
  if (width > 65535 || height > 65535) {
    throw new RangeError(`JPEG size ${width}x${height} is over 65535 pixels a side`);
  }
  const ch = image.channels ?? 4;
  if (image.data.length < width * height * ch) {
    throw new RangeError(`pixel data is shorter than ${width}x${height}x${ch} bytes`);
  }
  const quality = options.quality ?? 85;
  const sampling = (options.subsampling ?? "4:2:0") === "4:2:0" ? 2 : 1;
  const mcu = 8 * sampling;
  const lumaTable = scaleTable(LUMA_QUANT, quality);
  const chromaTable = scaleTable(CHROMA_QUANT, quality);
  const lumaDiv = divisors(lumaTable);
  const chromaDiv = divisors(chromaTable);
  const planes = toPlanes(image, mcu, sampling);

  const w = new ByteWriter(4096 + ((width * height) >> 2));
  writeHeaders(w, width, height, lumaTable, chromaTable, sampling);

  const block = new Float32Array(64);
  const coeffs = new Int32Array(64);
  const dc = [0, 0, 0];
  const encodeBlock = (
    plane: Float32Array,
    stride: number,
    x: number,
    y: number,
    div: Float32Array,
    dcCodes: HuffmanCodes,
    acCodes: HuffmanCodes,
    component: number,
  ) => {
    for (let r = 0, o = y * stride + x; r < 8; r++, o += stride) {
      block.set(plane.subarray(o, o + 8), r * 8);
    }
    forwardDct(block);
    let last = 0;
    for (let i = 0; i < 64; i++) {
      const k = ZIGZAG[i]!;
      const q = Math.round(block[k]! * div[k]!);
      // Baseline AC codes cover magnitudes up to 1023 (only quality 1-2 on extreme content reaches it).
      const v = i === 0 ? q : q > 1023 ? 1023 : q < -1023 ? -1023 : q;
      coeffs[i] = v;
      if (v !== 0) last = i;
    }
    w.ensure(512);
    const diff = coeffs[0]! - dc[component]!;
    dc[component] = coeffs[0]!;
    writeValue(w, diff, dcCodes, 0);
    let run = 0;
    for (let i = 1; i <= last; i++) {
      const v = coeffs[i]!;
      if (v === 0) {
        run++;
        continue;
      }
      while (run >= 16) {
        w.bits(acCodes.codes[0xf0]!, acCodes.lengths[0xf0]!);
        run -= 16;
      }
      writeValue(w, v, acCodes, run << 4);
      run = 0;
    }
    if (last < 63) w.bits(acCodes.codes[0]!, acCodes.lengths[0]!);
  };

  const { y, cb, cr, yStride, cStride } = planes;
  const rows = y.length / yStride;
  for (let my = 0; my < rows; my += mcu) {
    for (let mx = 0; mx < yStride; mx += mcu) {
      for (let by = 0; by < sampling; by++) {
        for (let bx = 0; bx < sampling; bx++) {
          encodeBlock(y, yStride, mx + bx * 8, my + by * 8, lumaDiv, CODES.dcLuma, CODES.acLuma, 0);
        }
      }
      const cx = mx / sampling, cy = my / sampling;
      encodeBlock(cb, cStride, cx, cy, chromaDiv, CODES.dcChroma, CODES.acChroma, 1);
      encodeBlock(cr, cStride, cx, cy, chromaDiv, CODES.dcChroma, CODES.acChroma, 2);
    }
  }
  w.flushBits();
  w.bytes([0xff, 0xd9]); // EOI
  return w.result();
}

/** Writes a coefficient: the Huffman code of (run << 4 | size), then `size` magnitude bits. */
function writeValue(w: ByteWriter, v: number, table: HuffmanCodes, runBits: number): void {
  const magnitude = v < 0 ? -v : v;
  const size = magnitude === 0 ? 0 : 32 - Math.clz32(magnitude);
  const symbol = runBits | size;
  w.bits(table.codes[symbol]!, table.lengths[symbol]!);
  if (size > 0) w.bits(v < 0 ? v + (1 << size) - 1 : v, size);
}

/** A `data:image/jpeg;base64,...` URL for JPEG bytes. */
export function jpegDataUrl(jpeg: Uint8Array): string {
  return "data:image/jpeg;base64," + jpeg.toBase64();
}
