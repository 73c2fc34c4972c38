/** A model's `image_generation` entry, and the `WIDTHxHEIGHT` sizes it lists. */
import { quote } from "../quote.ts";
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { readStrings, STRINGS } from "./rules.ts";
import type { ImageGenerationConfig } from "./types.ts";

const SIZE_PATTERN = /^([1-9][0-9]{1,4})x([1-9][0-9]{1,4})$/;

/** Parses `WIDTHxHEIGHT`; `null` when malformed or outside 16-8192 pixels a side. */
export function parseSize(size: string): { width: number; height: number } | null {
  const m = SIZE_PATTERN.exec(size);
  if (!m) return null;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < 16 || height < 16 || width > 8192 || height > 8192) return null;
  return { width, height };
}

/** A model's `image_generation` object (`true` reads as `{}`: every default). */
export function readImageGeneration(r: Reader): ImageGenerationConfig {
  const f = r.object();
  const sizes = f.get("sizes");
  const image: ImageGenerationConfig = {
    sizes: readStrings(sizes, { ...STRINGS, minItems: 1 }) ?? ["1024x1024"],
    max_n: f.integer("max_n", { optional: true, min: 1, max: 10 }) ?? 1,
    guidance_scale: f.boolean("guidance_scale", OPTIONAL) ?? false,
    num_inference_steps: f.boolean("num_inference_steps", OPTIONAL) ?? false,
  };
  image.sizes.forEach((size, i) => {
    if (!parseSize(size)) {
      throw sizes.child(i, size).invalid(
        `expected WIDTHxHEIGHT with 16\u20138192 pixels a side, like "1024x1024", but got ${
          quote(size)
        }`,
      );
    }
  });
  f.done();
  return image;
}
