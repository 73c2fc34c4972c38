import type { ModelRecord } from "../catalogue/model.ts";
import { type ImageGenerationConfig, parseSize } from "../config.ts";
import { invalidRequest } from "../errors.ts";
import type { ImageRequest } from "../types/openai.ts";
import { invalidValue, optionalField, requiredString, wrongType } from "./params.ts";
import { quote } from "../quote.ts";

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

/** The `model` of an image request: read first, so access is checked before anything else. */
export function imageModelId(body: Record<string, unknown>): string {
  const model = requiredString(body, "model");
  if (model === "") throw invalidValue("'model' must not be empty.", "model");
  return model;
}

function unsupported(model: string, param: string): never {
  throw invalidRequest(
    `The model \`${model}\` does not support '${param}'.`,
    param,
    "unsupported_parameter",
  );
}

function readN(body: Record<string, unknown>, id: string, image: ImageGenerationConfig): number {
  const n = optionalField(body, "n");
  if (n === undefined) return 1;
  if (typeof n !== "number" || !Number.isInteger(n)) throw wrongType("n", "an integer", n);
  if (n < 1) throw invalidValue(`Invalid 'n': must be at least 1, got ${n}.`, "n");
  if (n > 1 && image.max_n === 1) {
    throw invalidRequest(
      `The model \`${id}\` generates one image per request; 'n' must be 1, got ${n}.`,
      "n",
      "unsupported_parameter",
    );
  }
  if (n > image.max_n) {
    throw invalidValue(
      `Invalid 'n': the model \`${id}\` generates at most ${image.max_n} images per request, got ${n}.`,
      "n",
    );
  }
  return n;
}

function readSize(body: Record<string, unknown>, id: string, image: ImageGenerationConfig): string {
  const size = optionalField(body, "size");
  if (size === undefined) {
    return image.sizes.includes(DEFAULT_SIZE) ? DEFAULT_SIZE : image.sizes[0]!;
  }
  if (typeof size !== "string") throw wrongType("size", "a string", size);
  if (!image.sizes.includes(size)) {
    throw invalidValue(
      `Invalid size ${quote(size)} for the model \`${id}\`. Allowed sizes: ${
        image.sizes.join(", ")
      }.`,
      "size",
    );
  }
  return size;
}

/** A number parameter that only some models take: `null` when the model does not take it. */
function readTuning(
  body: Record<string, unknown>,
  id: string,
  param: "guidance_scale" | "num_inference_steps",
  supported: boolean,
  bounds: { min: number; max: number; default: number },
): number | null {
  const value = optionalField(body, param);
  if (value === undefined) return supported ? bounds.default : null;
  if (!supported) unsupported(id, param);
  const integer = param === "num_inference_steps";
  if (
    typeof value !== "number" || !Number.isFinite(value) || (integer && !Number.isInteger(value))
  ) {
    throw wrongType(param, integer ? "an integer" : "a number", value);
  }
  if (value < bounds.min || value > bounds.max) {
    throw invalidValue(
      `Invalid '${param}': must be from ${bounds.min} to ${bounds.max}, got ${value}.`,
      param,
    );
  }
  return value;
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
  const prompt = requiredString(body, "prompt");
  if (prompt.trim() === "") throw invalidValue("'prompt' must not be empty.", "prompt");
  if (prompt.length > IMAGE_LIMITS.promptChars) {
    throw invalidValue(
      `'prompt' is ${prompt.length} characters long; the limit is ${IMAGE_LIMITS.promptChars}.`,
      "prompt",
    );
  }
  const n = readN(body, id, image);
  const size = readSize(body, id, image);
  const { width, height } = parseSize(size)!;
  const guidance = readTuning(
    body,
    id,
    "guidance_scale",
    image.guidance_scale,
    IMAGE_LIMITS.guidanceScale,
  );
  const steps = readTuning(
    body,
    id,
    "num_inference_steps",
    image.num_inference_steps,
    IMAGE_LIMITS.steps,
  );
  const format = optionalField(body, "response_format") ?? "url";
  if (format !== "url" && format !== "b64_json") {
    throw invalidValue(
      `Invalid 'response_format': expected "url" or "b64_json", got ${quote(format)}.`,
      "response_format",
    );
  }
  const output = optionalField(body, "output_format");
  if (output !== undefined && output !== "jpeg") {
    throw invalidValue(
      `Invalid 'output_format': this endpoint returns JPEG images, so only "jpeg" is accepted; got ${
        quote(output)
      }.`,
      "output_format",
    );
  }
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
    responseFormat: format,
  };
}
