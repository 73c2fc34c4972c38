import { ADAM7, crc32 } from "../../src/images/png.ts";

/** What {@link writePng} writes: raw samples in the image's own bit depth. */
export interface PngSpec {
  width: number;
  height: number;
  colorType: 0 | 2 | 3 | 4 | 6;
  depth: 1 | 2 | 4 | 8 | 16;
  interlace?: boolean;
  /** Row-major samples, `channels` per pixel (palette images: one index per pixel). */
  samples: ArrayLike<number>;
  /** PLTE entries for palette images. */
  palette?: readonly (readonly [number, number, number])[];
  /** The raw tRNS chunk data, if any. */
  trns?: Uint8Array;
  /** Filter type for each row of each pass; default `row % 5`, so every type is used. */
  filter?: (row: number) => number;
  /** Extra chunks written after IHDR. */
  chunks?: { type: string; data: Uint8Array }[];
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;

/** A test-only PNG encoder that lets a test choose each row's filter and the interlacing. */
export async function writePng(spec: PngSpec): Promise<Uint8Array> {
  const channels = CHANNELS[spec.colorType];
  const bpp = channels * spec.depth;
  const unit = Math.max(1, bpp >> 3);
  const passes = spec.interlace
    ? ADAM7.map(([x0, y0, dx, dy]) => ({ x0, y0, dx, dy }))
    : [{ x0: 0, y0: 0, dx: 1, dy: 1 }];
  const raw: number[] = [];
  let rowNumber = 0;
  for (const { x0, y0, dx, dy } of passes) {
    const xs: number[] = [];
    for (let x = x0; x < spec.width; x += dx) xs.push(x);
    if (xs.length === 0) continue;
    let prev: number[] | null = null;
    for (let y = y0; y < spec.height; y += dy) {
      const bits: number[] = [];
      for (const x of xs) {
        for (let c = 0; c < channels; c++) {
          const v = spec.samples[(y * spec.width + x) * channels + c]!;
          for (let b = spec.depth - 1; b >= 0; b--) bits.push((v >> b) & 1);
        }
      }
      while (bits.length % 8 !== 0) bits.push(0);
      const row: number[] = [];
      for (let i = 0; i < bits.length; i += 8) {
        row.push(bits.slice(i, i + 8).reduce((n, b) => (n << 1) | b, 0));
      }
      const filter = (spec.filter ?? ((r) => r % 5))(rowNumber++);
      raw.push(filter, ...applyFilter(filter, row, prev, unit));
      prev = row;
    }
  }
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, spec.width);
  dv.setUint32(4, spec.height);
  ihdr.set([spec.depth, spec.colorType, 0, 0, spec.interlace ? 1 : 0], 8);
  const chunks: { type: string; data: Uint8Array }[] = [{ type: "IHDR", data: ihdr }];
  chunks.push(...spec.chunks ?? []);
  if (spec.palette) chunks.push({ type: "PLTE", data: Uint8Array.from(spec.palette.flat()) });
  if (spec.trns) chunks.push({ type: "tRNS", data: spec.trns });
  const compressed = await deflate(Uint8Array.from(raw));
  // Split the image data over two IDAT chunks, as encoders may.
  const half = compressed.length >> 1;
  chunks.push({ type: "IDAT", data: compressed.subarray(0, half) });
  chunks.push({ type: "IDAT", data: compressed.subarray(half) });
  chunks.push({ type: "IEND", data: new Uint8Array() });
  return concat([
    Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    ...chunks.map(chunkBytes),
  ]);
}

function applyFilter(filter: number, row: number[], prev: number[] | null, unit: number): number[] {
  return row.map((x, i) => {
    const a = i >= unit ? row[i - unit]! : 0;
    const b = prev ? prev[i]! : 0;
    const c = prev && i >= unit ? prev[i - unit]! : 0;
    let predictor = 0;
    if (filter === 1) predictor = a;
    else if (filter === 2) predictor = b;
    else if (filter === 3) predictor = Math.floor((a + b) / 2);
    else if (filter === 4) {
      const p = a + b - c;
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    return (x - predictor) & 0xff;
  });
}

/** One chunk with its length and CRC. */
export function chunkBytes(chunk: { type: string; data: Uint8Array }): Uint8Array {
  const out = new Uint8Array(12 + chunk.data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, chunk.data.length);
  out.set([...chunk.type].map((c) => c.charCodeAt(0)), 4);
  out.set(chunk.data, 8);
  dv.setUint32(8 + chunk.data.length, crc32(out.subarray(4, 8 + chunk.data.length)));
  return out;
}

/** zlib-compresses bytes with the built-in CompressionStream. */
export async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Concatenates byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}
