import type { ImagePart } from "../../canonical/conversation.ts";
import { invalidRequest } from "../../errors.ts";
import { type ImageCaps, type ImageField, parseRequestImages } from "../../http/image_data_url.ts";
import { absent, invalidType, isObject, kindOf, type Obj } from "./checks.ts";
import { invalidValue } from "../../routes/params.ts";
import { quote } from "../../quote.ts";

/** The image data URLs of a request met while parsing it, with the parts they belong in: they
 * are decoded together once the whole request is checked, so that the per-request caps see
 * every image. */
export interface PendingImages {
  fields: ImageField[];
  parts: ImagePart[];
}

const HTTPS = /^https:\/\//i;

/**
 * An `image_url` content part: an `https://` URL becomes an image by URL (the gateway never
 * fetches it; back ends that cannot pass URLs on say so), anything else must be a base64 image
 * data URL, decoded later by {@link decodeImages}.
 */
export function parseImagePart(raw: Obj, at: string, pending: PendingImages): ImagePart {
  const image = raw.image_url;
  if (!isObject(image)) {
    throw invalidType(
      `\`${at}.image_url\` must be an object with a \`url\` (a base64 image data URL or an https:// URL), not ${
        kindOf(image)
      }.`,
      `${at}.image_url`,
    );
  }
  const param = `${at}.image_url.url`;
  const url = image.url;
  if (typeof url !== "string") {
    throw invalidType(
      `\`${param}\` must be a string (a base64 image data URL or an https:// URL), not ${
        kindOf(url)
      }.`,
      param,
    );
  }
  const part: ImagePart = { type: "image", source: { kind: "url", url } };
  const detail = image.detail;
  if (!absent(detail)) {
    if (detail !== "auto" && detail !== "low" && detail !== "high") {
      throw invalidValue(
        `\`${at}.image_url.detail\` must be "auto", "low" or "high", not ${quote(detail)}.`,
        `${at}.image_url.detail`,
      );
    }
    part.detail = detail;
  }
  if (HTTPS.test(url)) {
    if (!URL.canParse(url)) {
      throw invalidRequest(`${param} is not a valid URL.`, param, "invalid_image");
    }
  } else {
    pending.fields.push({ url, param });
    pending.parts.push(part);
  }
  return part;
}

/** Decodes and checks the pending data URLs (each and all within `caps`) and puts their bytes
 * in their parts. Throws a 400 naming the first that fails. */
export function decodeImages(pending: PendingImages, caps: Readonly<ImageCaps>): void {
  for (const { url, param } of pending.fields) {
    if (/^http:/i.test(url)) {
      throw invalidRequest(
        `${param} must be a base64 image data URL or an https:// URL; plain http:// URLs are not accepted.`,
        param,
        "invalid_image",
      );
    }
  }
  parseRequestImages(pending.fields, caps).forEach((info, i) => {
    pending.parts[i]!.source = { kind: "data", mediaType: info.mediaType, base64: info.base64 };
  });
}
