import { DEFAULT_IMAGE_CAPS } from "../../config/limits.ts";
import { type ImageCaps, type ImageField, parseRequestImages } from "../../http/image_data_url.ts";
import { invalidValue } from "../../validation/error.ts";
import { type Reader, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";

/** Bounds on moderation requests (spec §8.4 leaves them open). */
export const MODERATION_LIMITS = {
  /** Texts in one batch. */
  inputs: 256,
  /** Characters in one text. */
  textChars: 100_000,
  /** Images in one request. */
  images: 16,
} as const;

/** The texts and images of a moderation request, checked. */
export interface ModerationInput {
  input: string[];
  /** Image data URLs, checked to be PNG, JPEG, GIF or WebP images. */
  images: string[];
}

const MODEL = { optional: true, nonEmpty: true } as const;
const TEXT = { maxLength: MODERATION_LIMITS.textChars } as const;
const BATCH = {
  minItems: 1,
  maxItems: MODERATION_LIMITS.inputs,
  expected: "a string or an array of strings",
} as const;
const BATCH_TEXT = { ...TEXT, expected: "a string like the other items" } as const;
const PART = { expected: "a content part object like the other items" } as const;
const PART_TYPES = ["text", "image_url"] as const;
const IMAGE_URL = { expected: "a string (a base64 image data URL)" } as const;
const IMAGES = { optional: true, expected: "an array of strings" } as const;

/** The requested model id, or `null` for the default moderation model. */
export function moderationModelId(body: Record<string, unknown>): string | null {
  return readRequest(body).string("model", MODEL) ?? null;
}

/** The texts of a request, and its image fields (not yet decoded). */
interface Unchecked {
  input: string[];
  images: ImageField[];
}

/**
 * OpenAI's multimodal form: an array of `{type: "text", text}` and
 * `{type: "image_url", image_url: {url}}` parts, moderated together as one input.
 */
function readParts(input: Reader, parts: Reader[]): Unchecked {
  const texts: string[] = [];
  const images: ImageField[] = [];
  for (const item of parts) {
    const part = item.object(PART);
    if (part.oneOf("type", PART_TYPES) === "text") {
      texts.push(part.string("text"));
    } else {
      const image = part.object("image_url");
      images.push({ url: image.string("url", IMAGE_URL), param: image.get("url").path });
    }
  }
  const text = texts.join("\n");
  if (text.length > MODERATION_LIMITS.textChars) {
    throw input.invalid(
      `expected at most ${
        count(MODERATION_LIMITS.textChars, "character")
      } of text in all, but got ${text.length}`,
    );
  }
  return { input: [text], images };
}

/**
 * Validates `input` (a string, an array of strings, or OpenAI's array of content parts) and
 * `input_images` (base64 image data URLs, each decoded and checked, within `caps`). Throws a
 * 400 naming the parameter. Unknown fields are ignored, as OpenAI does.
 */
export function readModerationInput(
  body: Record<string, unknown>,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ModerationInput {
  const f = readRequest(body);
  const input = f.get("input");
  let result: Unchecked;
  if (typeof input.value === "string") {
    result = { input: [input.string(TEXT)], images: [] };
  } else {
    const items = input.array(BATCH);
    result = typeof items[0]!.value === "string"
      ? { input: items.map((item) => item.string(BATCH_TEXT)), images: [] }
      : readParts(input, items);
  }
  const images = f.array("input_images", IMAGES);
  for (const image of images ?? []) {
    result.images.push({ url: image.string(IMAGE_URL), param: image.path });
  }
  if (result.images.length > MODERATION_LIMITS.images) {
    throw invalidValue(
      "input_images",
      `expected at most ${
        count(MODERATION_LIMITS.images, "image")
      } in a request (content parts and input_images together), but got ${result.images.length}`,
    );
  }
  parseRequestImages(result.images, caps);
  return { input: result.input, images: result.images.map((image) => image.url) };
}
