import type { ImagePart, RefusalPart, TextPart } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { parseImagePart, type PendingImages } from "../shared/images.ts";

/** The content part types a role may send: `image_url` only from users, `refusal` only from
 * the assistant (OpenAI's rules). */
type PartKinds = "text" | "text+image" | "text+refusal";

type PartType = "text" | "image_url" | "refusal";

const ALLOWED: Record<PartKinds, readonly PartType[]> = {
  "text": ["text"],
  "text+image": ["text", "image_url"],
  "text+refusal": ["text", "refusal"],
};

/** The array rules of each kind of content. */
type ContentRules = { readonly minItems: 1; readonly expected: string };
const ARRAY_RULES: Record<PartKinds, ContentRules> = {
  "text": { minItems: 1, expected: "a string or an array of text content parts" },
  "text+image": {
    minItems: 1,
    expected: "a string or an array of text or image_url content parts",
  },
  "text+refusal": {
    minItems: 1,
    expected: "a string or an array of text or refusal content parts",
  },
};

/** What {@link parseContent} makes of each kind. */
type PartOf<K extends PartKinds> = K extends "text+image" ? TextPart | ImagePart
  : K extends "text+refusal" ? TextPart | RefusalPart
  : TextPart;

/**
 * A message's `content` (a string, or a non-empty array of content parts of the kinds its role
 * may send) as canonical parts; `cache_control` on a part marks it. Image data URLs are left to
 * `pending`.
 */
export function parseContent<K extends PartKinds>(
  r: Reader,
  kinds: K,
  role: string,
  pending: PendingImages,
): PartOf<K>[] {
  if (typeof r.value === "string") return [{ type: "text", text: r.value } as PartOf<K>];
  const rules: ContentRules = ARRAY_RULES[kinds];
  return r.array(rules).map((item) => {
    const p = item.object();
    const type = partType(p, ALLOWED[kinds], role);
    const part: TextPart | ImagePart | RefusalPart = type === "image_url"
      ? parseImagePart(p, pending)
      : type === "refusal"
      ? { type: "refusal", text: p.string("refusal") }
      : { type: "text", text: p.string("text") };
    const cache = parseCacheControl(p.object("cache_control", OPTIONAL));
    if (cache && part.type !== "refusal") part.cache = cache;
    return part as PartOf<K>;
  });
}

/** A part's `type`, one of `allowed`; a type that only another role may send says so. */
function partType(p: Fields, allowed: readonly PartType[], role: string): PartType {
  const type = p.get("type");
  const value = type.value;
  if ((value === "image_url" || value === "refusal") && !allowed.includes(value)) {
    const owner = value === "image_url" ? "user" : "assistant";
    throw type.invalid(
      `${value} parts are only allowed in ${owner} messages, not in ${role} messages`,
    );
  }
  return type.oneOf(allowed);
}
