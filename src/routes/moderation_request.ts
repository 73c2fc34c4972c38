import { invalidRequest } from "../errors.ts";
import { quote } from "../quote.ts";
import { DEFAULT_IMAGE_CAPS } from "../config.ts";
import { type ImageCaps, type ImageField, parseRequestImages } from "../http/image_data_url.ts";
import { invalidValue, optionalField, typeName, wrongType } from "./params.ts";

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

/** The requested model id, or `null` for the default moderation model. */
export function moderationModelId(body: Record<string, unknown>): string | null {
  const model = optionalField(body, "model");
  if (model === undefined) return null;
  if (typeof model !== "string") throw wrongType("model", "a string", model);
  if (model === "") {
    throw invalidValue("'model' must not be empty; omit it for the default.", "model");
  }
  return model;
}

function checkText(text: string, param: string): string {
  if (text.length > MODERATION_LIMITS.textChars) {
    throw invalidValue(
      `'${param}' is ${text.length} characters long; the limit is ${MODERATION_LIMITS.textChars}.`,
      param,
    );
  }
  return text;
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
function readParts(parts: unknown[]): Unchecked {
  const texts: string[] = [];
  const images: ImageField[] = [];
  parts.forEach((part, i) => {
    const param = `input[${i}]`;
    if (typeof part !== "object" || part === null || Array.isArray(part)) {
      throw invalidValue(
        `Invalid '${param}': every item must be a string, or every item a content part object; got ${
          typeName(part)
        }.`,
        param,
      );
    }
    const p = part as Record<string, unknown>;
    if (p.type === "text") {
      if (typeof p.text !== "string") throw wrongType(`${param}.text`, "a string", p.text);
      texts.push(p.text);
    } else if (p.type === "image_url") {
      const image = p.image_url as Record<string, unknown> | undefined;
      const url = typeof image === "object" && image !== null ? image.url : undefined;
      if (typeof url !== "string") {
        throw wrongType(`${param}.image_url.url`, "a string (a base64 image data URL)", url);
      }
      images.push({ url, param: `${param}.image_url.url` });
    } else {
      throw invalidValue(
        `Invalid '${param}.type': expected "text" or "image_url", got ${quote(p.type)}.`,
        `${param}.type`,
      );
    }
  });
  return { input: [checkText(texts.join("\n"), "input")], images };
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
  const raw = body.input;
  let result: Unchecked;
  if (raw === undefined || raw === null) {
    throw invalidRequest(
      "Missing required parameter: 'input'.",
      "input",
      "missing_required_parameter",
    );
  } else if (typeof raw === "string") {
    result = { input: [checkText(raw, "input")], images: [] };
  } else if (Array.isArray(raw)) {
    if (raw.length === 0) throw invalidValue("'input' must not be an empty array.", "input");
    if (raw.length > MODERATION_LIMITS.inputs) {
      throw invalidValue(
        `'input' has ${raw.length} items; the limit is ${MODERATION_LIMITS.inputs} per request.`,
        "input",
      );
    }
    if (typeof raw[0] === "string") {
      const input = raw.map((item, i) => {
        if (typeof item !== "string") {
          throw invalidValue(
            `Invalid 'input[${i}]': expected a string like the other items, got ${typeName(item)}.`,
            `input[${i}]`,
          );
        }
        return checkText(item, `input[${i}]`);
      });
      result = { input, images: [] };
    } else result = readParts(raw);
  } else throw wrongType("input", "a string or an array of strings", raw);

  const images = optionalField(body, "input_images");
  if (images !== undefined) {
    if (!Array.isArray(images)) throw wrongType("input_images", "an array of strings", images);
    images.forEach((url, i) => {
      const param = `input_images[${i}]`;
      if (typeof url !== "string") {
        throw wrongType(param, "a string (a base64 image data URL)", url);
      }
      result.images.push({ url, param });
    });
  }
  if (result.images.length > MODERATION_LIMITS.images) {
    throw invalidValue(
      `This request has ${result.images.length} images; the limit is ${MODERATION_LIMITS.images}.`,
      "input_images",
    );
  }
  parseRequestImages(result.images, caps);
  return { input: result.input, images: result.images.map((image) => image.url) };
}
