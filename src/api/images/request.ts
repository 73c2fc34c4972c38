import type { ModelRecord } from "../../catalogue/model.ts";
import type { ImageGenerationConfig } from "../../config/types.ts";
import { parseSize } from "../../config/image_generation.ts";
import type { ImageRequest } from "../../types/openai.ts";
import { invalidValue, unsupportedParameter } from "../../validation/error.ts";
import { type Fields, OPTIONAL, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";

/** Bounds on image requests (spec §8.4 leaves them open). */
export const IMAGE_LIMITS = {
  promptChars: 32_000,
  guidanceScale: { min: 0, max: 20, default: 3.5 },
  steps: { min: 1, max: 150, default: 30 },
} as const;

/** The spec's default size (used when the model allows it; else the model's first size). */
export const DEFAULT_SIZE = "1024x1024";

/** How the caller wants the images: data URLs (the default) or bare base64. */
export type ResponseFormat = "url" | "b64_json";

const MODEL = { nonEmpty: true } as const;
const PROMPT = { maxLength: IMAGE_LIMITS.promptChars } as const;
const N = { optional: true, min: 1 } as const;
const RESPONSE_FORMATS = ["url", "b64_json"] as const;
/** This endpoint answers JPEG images only. */
const OUTPUT_FORMATS = ["jpeg"] as const;

/** The `model` of an image request: read first, so access is checked before anything else. */
export function imageModelId(body: Record<string, unknown>): string {
  return readRequest(body).string("model", MODEL);
}

function readN(f: Fields, id: string, image: ImageGenerationConfig): number {
  const n = f.integer("n", N);
  if (n === undefined) return 1;
  if (n > 1 && image.max_n === 1) {
    throw unsupportedParameter("n", `The model \`${id}\` generates one image per request.`);
  }
  if (n > image.max_n) {
    throw invalidValue(
      "n",
      `expected at most ${
        count(image.max_n, "image")
      } per request from the model \`${id}\`, but got ${n}`,
    );
  }
  return n;
}

/** A number parameter that only some models take: `null` when the model does not take it. */
function readTuning(
  f: Fields,
  id: string,
  param: "guidance_scale" | "num_inference_steps",
  supported: boolean,
  bounds: { min: number; max: number; default: number },
): number | null {
  if (!f.has(param)) return supported ? bounds.default : null;
  if (!supported) {
    throw unsupportedParameter(param, `The model \`${id}\` does not take it.`);
  }
  return param === "num_inference_steps" ? f.integer(param, bounds) : f.number(param, bounds);
}

/**
 * Validates an image generation request against the model's image settings (spec §4.4) and
 * fills the defaults. Throws a 400 naming the parameter. Unknown fields are ignored, as OpenAI
 * does.
 */
export function readImageRequest(
  body: Record<string, unknown>,
  model: ModelRecord,
  image: ImageGenerationConfig,
): { request: ImageRequest; responseFormat: ResponseFormat } {
  const id = model.id;
  const f = readRequest(body);
  const prompt = f.string("prompt", PROMPT);
  if (prompt.trim() === "") {
    throw invalidValue(
      "prompt",
      `expected a description of the image, but got ${
        prompt === "" ? "an empty string" : "only white space"
      }`,
    );
  }
  const n = readN(f, id, image);
  const size = f.oneOf("size", image.sizes, OPTIONAL) ??
    (image.sizes.includes(DEFAULT_SIZE) ? DEFAULT_SIZE : image.sizes[0]!);
  const { width, height } = parseSize(size)!;
  const guidance = readTuning(
    f,
    id,
    "guidance_scale",
    image.guidance_scale,
    IMAGE_LIMITS.guidanceScale,
  );
  const steps = readTuning(
    f,
    id,
    "num_inference_steps",
    image.num_inference_steps,
    IMAGE_LIMITS.steps,
  );
  const responseFormat = f.oneOf("response_format", RESPONSE_FORMATS, OPTIONAL) ?? "url";
  f.oneOf("output_format", OUTPUT_FORMATS, OPTIONAL);
  return {
    request: {
      model: id,
      prompt,
      n,
      size,
      width,
      height,
      guidance_scale: guidance,
      num_inference_steps: steps,
    },
    responseFormat,
  };
}
