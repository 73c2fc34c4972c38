/** Decompression bombs: small images whose compressed parts inflate to hundreds of megabytes. */
import { chunkBytes, concat, writePng } from "./png_writer.ts";

const encoder = new TextEncoder();

/** `size` zero bytes, zlib-compressed (about 1 KB per MB) without holding them all at once. */
export async function deflatedZeros(size: number): Promise<Uint8Array> {
  const { readable, writable } = new CompressionStream("deflate");
  const zeros = new Uint8Array(1 << 20);
  const writing = (async () => {
    const writer = writable.getWriter();
    for (let left = size; left > 0; left -= zeros.length) {
      await writer.write(zeros.subarray(0, Math.min(left, zeros.length)));
    }
    await writer.close();
  })();
  const [bytes] = await Promise.all([new Response(readable).bytes(), writing]);
  return bytes;
}

/** A 4x4 PNG whose zTXt chunk, or compressed iTXt chunk, inflates to `size` zero bytes. */
export async function textBombPng(size: number, kind: "zTXt" | "iTXt" = "zTXt") {
  const header = kind === "zTXt"
    ? concat([encoder.encode("Comment\0"), Uint8Array.of(0)])
    : concat([encoder.encode("Comment\0"), Uint8Array.of(1, 0), encoder.encode("en\0\0")]);
  return await writePng({
    width: 4,
    height: 4,
    colorType: 2,
    depth: 8,
    samples: new Array(48).fill(90),
    chunks: [{ type: kind, data: concat([header, await deflatedZeros(size)]) }],
  });
}

/** A PNG whose IHDR declares `width`×`height` 8-bit RGBA pixels and whose IDAT is `idat`. */
export function pngDeclaring(width: number, height: number, idat: Uint8Array): Uint8Array {
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, width);
  dv.setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return concat([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunkBytes({ type: "IHDR", data: ihdr }),
    chunkBytes({ type: "IDAT", data: idat }),
    chunkBytes({ type: "IEND", data: new Uint8Array() }),
  ]);
}

/** What `work` gives, and how much the process's resident memory grew while it ran (bytes). */
export async function measured<T>(
  work: () => T | Promise<T>,
): Promise<{ result: T; growth: number }> {
  const before = Deno.memoryUsage().rss;
  const result = await work();
  return { result, growth: Deno.memoryUsage().rss - before };
}
