import type { ImagePart } from "../../canonical/conversation.ts";
import { type ImageCaps, type ImageField, parseRequestImages } from "../../http/image_data_url.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";

/** The image data URLs of a request met while parsing it, with the parts they belong in: they
 * are decoded together once the whole request is checked, so that the per-request caps see
 * every image. */
export interface PendingImages {
  fields: ImageField[];
  parts: ImagePart[];
}

const HTTPS = /^https:\/\//i;
const DETAILS = ["auto", "low", "high"] as const;
const URL_RULES = { expected: "a string (a base64 image data URL or an https:// URL)" } as const;

/**
 * An `image_url` content part: an `https://` URL becomes an image by URL (the gateway never
 * fetches it; back ends that cannot pass URLs on say so), anything else must be a base64 image
 * data URL, decoded later by {@link decodeImages}.
 */
export function parseImagePart(p: Fields, pending: PendingImages): ImagePart {
  const image = p.object("image_url");
  const url = image.string("url", URL_RULES);
  const part: ImagePart = { type: "image", source: { kind: "url", url } };
  const detail = image.oneOf("detail", DETAILS, OPTIONAL);
  if (detail !== undefined) part.detail = detail;
  if (HTTPS.test(url)) {
    if (!URL.canParse(url)) {
      throw image.get("url").invalid(
        `expected a valid URL, but got ${quote(url)}`,
        "invalid_image",
      );
    }
  } else {
    pending.fields.push({ url, param: image.get("url").path });
    pending.parts.push(part);
  }
  return part;
}

/** Decodes and checks the pending data URLs (each and all within `caps`) and puts their bytes
 * in their parts. Throws a 400 naming the first that fails. */
export function decodeImages(pending: PendingImages, caps: Readonly<ImageCaps>): void {
  for (const { url, param } of pending.fields) {
    if (/^http:/i.test(url)) {
      throw invalidValue(
        param,
        "expected a base64 image data URL or an https:// URL, but got a plain http:// URL",
        "invalid_image",
      );
    }
  }
  parseRequestImages(pending.fields, caps).forEach((info, i) => {
    pending.parts[i]!.source = { kind: "data", mediaType: info.mediaType, base64: info.base64 };
  });
}
