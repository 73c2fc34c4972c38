import { encodeJpeg, jpegDataUrl, type JpegOptions } from "./jpeg.ts";
import { decodePng, type PngOptions, type RgbaImage } from "./png.ts";

/** Composites RGBA pixels over a white background, giving RGB. */
export function flattenOnWhite(image: RgbaImage): Uint8Array {
  const { data } = image;
  const out = new Uint8Array(image.width * image.height * 3);
  for (let i = 0, o = 0; i < data.length; i += 4, o += 3) {
    const a = data[i + 3]!;
    if (a === 255) {
      out[o] = data[i]!;
      out[o + 1] = data[i + 1]!;
      out[o + 2] = data[i + 2]!;
    } else {
      const white = 255 * (255 - a);
      out[o] = Math.round((data[i]! * a + white) / 255);
      out[o + 1] = Math.round((data[i + 1]! * a + white) / 255);
      out[o + 2] = Math.round((data[i + 2]! * a + white) / 255);
    }
  }
  return out;
}

/** Re-encodes PNG bytes as JPEG (transparency composited on white). Throws PngError. */
export async function pngToJpeg(
  png: Uint8Array,
  options: JpegOptions & PngOptions = {},
): Promise<Uint8Array> {
  const image = await decodePng(png, options);
  return encodeJpeg(
    { width: image.width, height: image.height, data: flattenOnWhite(image), channels: 3 },
    options,
  );
}

/** PNG bytes -> a `data:image/jpeg;base64,...` URL. Throws PngError. */
export async function pngToJpegDataUrl(
  png: Uint8Array,
  options: JpegOptions & PngOptions = {},
): Promise<string> {
  return jpegDataUrl(await pngToJpeg(png, options));
}
