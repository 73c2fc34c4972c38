import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { PNG } from "npm:pngjs@7.0.0";
import { crc32, decodePng, inflate, PngError } from "../../src/images/png.ts";
import { deflatedZeros, measured, pngDeclaring } from "../support/bombs.ts";
import { chunkBytes, concat, deflate, type PngSpec, writePng } from "../support/png_writer.ts";

/** The reference decoder (pngjs), giving 8-bit RGBA like ours. */
function referenceDecode(png: Uint8Array): { width: number; height: number; data: Uint8Array } {
  const image = PNG.sync.read(Buffer.from(png));
  return { width: image.width, height: image.height, data: new Uint8Array(image.data) };
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;

/** Samples that vary in every channel and reach both ends of the range. */
function pattern(width: number, height: number, channels: number, depth: number): number[] {
  const max = 2 ** depth - 1;
  const out: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const v = (x * 37 + y * 101 + c * 59 + x * y * 13) % (max + 1);
        out.push(x === 0 && y === 0 ? max : v);
      }
    }
  }
  return out;
}

/** What our decoder must produce for a gray/RGB/alpha spec, computed independently. */
function expectedRgba(spec: PngSpec): Uint8Array {
  const ch = CHANNELS[spec.colorType];
  const max = 2 ** spec.depth - 1;
  const to8 = (v: number) => Math.round((v * 255) / max);
  const out = new Uint8Array(spec.width * spec.height * 4);
  for (let i = 0; i < spec.width * spec.height; i++) {
    const s = Array.from({ length: ch }, (_, c) => spec.samples[i * ch + c]!);
    let rgba: number[];
    if (spec.colorType === 3) {
      const [r, g, b] = spec.palette![s[0]!]!;
      rgba = [r, g, b, spec.trns && s[0]! < spec.trns.length ? spec.trns[s[0]!]! : 255];
    } else if (spec.colorType === 0) rgba = [to8(s[0]!), to8(s[0]!), to8(s[0]!), 255];
    else if (spec.colorType === 2) rgba = [to8(s[0]!), to8(s[1]!), to8(s[2]!), 255];
    else if (spec.colorType === 4) rgba = [to8(s[0]!), to8(s[0]!), to8(s[0]!), to8(s[1]!)];
    else rgba = s.map(to8);
    out.set(rgba, i * 4);
  }
  return out;
}

const COMBINATIONS: [PngSpec["colorType"], PngSpec["depth"][]][] = [
  [0, [1, 2, 4, 8, 16]],
  [2, [8, 16]],
  [3, [1, 2, 4, 8]],
  [4, [8, 16]],
  [6, [8, 16]],
];

for (const [colorType, depths] of COMBINATIONS) {
  for (const depth of depths) {
    for (const interlace of [false, true]) {
      const name = `colour type ${colorType}, ${depth}-bit${interlace ? ", Adam7" : ""}`;
      Deno.test(`decodePng: ${name}, all five filters, matches the source and pngjs`, async () => {
        const width = 13, height = 11;
        const spec: PngSpec = {
          width,
          height,
          colorType,
          depth,
          interlace,
          samples: pattern(width, height, CHANNELS[colorType], depth),
        };
        if (colorType === 3) {
          spec.palette = Array.from(
            { length: 2 ** depth },
            (_, i) => [(i * 67) % 256, (i * 131 + 7) % 256, 255 - i] as const,
          );
          spec.trns = Uint8Array.from([0, 128, 200].slice(0, 2 ** depth));
        }
        const png = await writePng(spec);
        const ours = await decodePng(png);
        assert.equal(ours.width, width);
        assert.equal(ours.height, height);
        assert.deepEqual(ours.data, expectedRgba(spec));
        assert.deepEqual(ours.data, referenceDecode(png).data);
      });
    }
  }
}

Deno.test("decodePng: tiny interlaced images where some Adam7 passes are empty", async () => {
  for (const [width, height] of [[1, 1], [2, 1], [1, 3], [3, 2], [5, 5]]) {
    const spec: PngSpec = {
      width: width!,
      height: height!,
      colorType: 6,
      depth: 8,
      interlace: true,
      samples: pattern(width!, height!, 4, 8),
    };
    const png = await writePng(spec);
    assert.deepEqual((await decodePng(png)).data, expectedRgba(spec), `${width}x${height}`);
  }
});

Deno.test("decodePng: tRNS makes the key colour transparent in gray and RGB images", async () => {
  const gray: PngSpec = {
    width: 3,
    height: 1,
    colorType: 0,
    depth: 16,
    samples: [1000, 4660, 65535],
    trns: Uint8Array.from([0x12, 0x34]),
  };
  assert.deepEqual(
    Array.from((await decodePng(await writePng(gray))).data),
    [4, 4, 4, 255, 18, 18, 18, 0, 255, 255, 255, 255],
  );
  const rgb: PngSpec = {
    width: 2,
    height: 1,
    colorType: 2,
    depth: 8,
    samples: [10, 20, 30, 10, 20, 31],
    trns: Uint8Array.from([0, 10, 0, 20, 0, 30]),
  };
  const png = await writePng(rgb);
  assert.deepEqual(Array.from((await decodePng(png)).data), [10, 20, 30, 0, 10, 20, 31, 255]);
  // pngjs agrees on the alpha channel (it zeroes the colour of transparent pixels).
  const alpha = (d: Uint8Array) => d.filter((_, i) => i % 4 === 3);
  assert.deepEqual(alpha((await decodePng(png)).data), alpha(referenceDecode(png).data));
});

Deno.test("decodePng: files written by pngjs (an independent encoder) decode identically", async () => {
  for (const [colorType, bitDepth] of [[6, 8], [6, 16], [2, 8], [0, 8], [4, 8]]) {
    const image = new PNG({ width: 31, height: 17 });
    for (let i = 0; i < image.data.length; i++) image.data[i] = (i * 7 + (i >> 6)) % 256;
    const png = new Uint8Array(
      PNG.sync.write(image, { colorType, bitDepth, inputHasAlpha: true, filterType: -1 }),
    );
    assert.deepEqual(
      (await decodePng(png)).data,
      referenceDecode(png).data,
      `colour type ${colorType}, ${bitDepth}-bit`,
    );
  }
});

Deno.test("decodePng: a 1024x1024 RGBA image decodes to the same pixels as pngjs", async () => {
  const image = new PNG({ width: 1024, height: 1024 });
  for (let i = 0; i < image.data.length; i++) image.data[i] = (i * 31 + (i >> 12)) & 0xff;
  const png = new Uint8Array(PNG.sync.write(image));
  const ours = await decodePng(png);
  assert.deepEqual(ours.data, new Uint8Array(image.data));
});

async function valid(): Promise<Uint8Array> {
  return await writePng({
    width: 4,
    height: 4,
    colorType: 2,
    depth: 8,
    samples: pattern(4, 4, 3, 8),
  });
}

async function rejects(png: Uint8Array, message: RegExp, options = {}) {
  await assert.rejects(decodePng(png, options), (e: unknown) => {
    assert.ok(e instanceof PngError, `expected PngError, got ${e}`);
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("decodePng: corrupt and unsupported files fail with a clear PngError", async () => {
  const png = await valid();
  await rejects(png.subarray(1), /signature/);
  await rejects(png.subarray(0, png.length - 12), /ends before its IEND/);
  await rejects(png.subarray(0, 40), /past the end|ends before/);

  const badCrc = png.slice();
  badCrc[30] = badCrc[30]! ^ 0xff; // inside IHDR's data or CRC
  await rejects(badCrc, /CRC mismatch/);

  const ihdr = png.subarray(8, 33);
  const iend = chunkBytes({ type: "IEND", data: new Uint8Array() });
  const withChunk = (type: string, data: Uint8Array) =>
    concat([png.subarray(0, 33), chunkBytes({ type, data }), png.subarray(33)]);
  await rejects(withChunk("XXXX", new Uint8Array(1)), /unsupported critical chunk XXXX/);
  // An unknown ancillary chunk is skipped.
  assert.equal((await decodePng(withChunk("xxXX", new Uint8Array(3)))).width, 4);

  const header = (mutate: (d: Uint8Array) => void) => {
    const data = ihdr.slice(8, 21);
    mutate(data);
    return concat([png.subarray(0, 8), chunkBytes({ type: "IHDR", data }), png.subarray(33)]);
  };
  await rejects(header((d) => d[8] = 3), /bit depth 3 is not allowed with colour type 2/);
  await rejects(header((d) => d[9] = 5), /invalid colour type 5/);
  await rejects(header((d) => d[12] = 2), /unknown interlace method 2/);
  await rejects(header((d) => d.set([0, 0, 0, 0], 0)), /invalid image size 0x4/);
  await rejects(png, /larger than the limit of 10 pixels/, { maxPixels: 10 });

  const idat = async (raw: number[]) =>
    concat([
      png.subarray(0, 33),
      chunkBytes({ type: "IDAT", data: await deflate(Uint8Array.from(raw)) }),
      iend,
    ]);
  await rejects(await idat([5, ...new Array(51).fill(0)]), /unknown filter type 5 on row 0/);
  await rejects(await idat([0, 1, 2, 3]), /cut short/);
  await rejects(
    concat([
      png.subarray(0, 33),
      chunkBytes({ type: "IDAT", data: Uint8Array.from([1, 2, 3]) }),
      iend,
    ]),
    /corrupt compressed image data/,
  );
  await rejects(concat([png.subarray(0, 33), iend]), /no IDAT chunk/);
});

Deno.test("decodePng: palette problems are named", async () => {
  const spec: PngSpec = {
    width: 2,
    height: 1,
    colorType: 3,
    depth: 8,
    samples: [0, 2],
    palette: [[1, 2, 3], [4, 5, 6]],
  };
  await rejects(await writePng(spec), /palette index 2 is out of range/);
  const { palette: _, ...noPalette } = spec;
  await rejects(await writePng(noPalette), /no PLTE chunk/);
});

const MB = 1024 * 1024;

Deno.test("inflate: of a bomb (200 MB of zeros) it keeps only the limit, in little memory", async () => {
  const bomb = await deflatedZeros(200 * MB);
  const { result: out, growth } = await measured(() => inflate(bomb, 1000));
  assert.equal(out.length, 1000);
  assert.ok(out.every((b) => b === 0));
  assert.ok(growth < 100 * MB, `RSS grew by ${(growth / MB).toFixed(0)} MB`);
  // Below the limit, everything; a limit inside a slice's output is kept exactly.
  const text = new TextEncoder().encode("x".repeat(50_000));
  assert.deepEqual(await inflate(await deflate(text), 1e9), text);
  assert.deepEqual(await inflate(await deflate(text), 12_345), text.subarray(0, 12_345));
});

Deno.test("decodePng: an IHDR declaring 100000x100000 is refused before any inflating", async () => {
  const bomb = pngDeclaring(100_000, 100_000, await deflatedZeros(200 * MB));
  const { result: refused, growth } = await measured(() =>
    decodePng(bomb, { maxPixels: 33_554_432 }).then(() => null, (e: unknown) => e)
  );
  assert.ok(refused instanceof PngError);
  assert.match(refused.message, /100000x100000 is larger than the limit of 33554432 pixels/);
  assert.ok(growth < 100 * MB, `RSS grew by ${(growth / MB).toFixed(0)} MB`);
  // Not zlib data at all: still the size error, so nothing was inflated.
  await rejects(
    pngDeclaring(100_000, 100_000, Uint8Array.of(1, 2, 3)),
    /larger than the limit of 64 pixels/,
    { maxPixels: 64 },
  );
});

Deno.test("decodePng: an IDAT bomb inside the pixel cap inflates only the image's bytes", async () => {
  const bomb = pngDeclaring(1000, 1000, await deflatedZeros(200 * MB));
  const { result: image, growth } = await measured(() => decodePng(bomb));
  assert.deepEqual([image.width, image.height, image.data.length], [1000, 1000, 4_000_000]);
  assert.ok(growth < 100 * MB, `RSS grew by ${(growth / MB).toFixed(0)} MB`);
});

Deno.test("crc32: the check value of the CRC-32 used by PNG", () => {
  assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
});
