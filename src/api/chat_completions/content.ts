import type { ImagePart, RefusalPart, TextPart } from "../../canonical/conversation.ts";
import { parseCacheControl } from "./cache_control.ts";
import { invalidType, isObject, kindOf, missing, notThis } from "./checks.ts";
import { invalidValue } from "../../routes/params.ts";
import { parseImagePart, type PendingImages } from "./images.ts";

/** The content part types a role may send: `image_url` only from users, `refusal` only from
 * the assistant (OpenAI's rules). */
type PartKinds = "text" | "text+image" | "text+refusal";

const ALLOWED: Record<PartKinds, string[]> = {
  "text": ["text"],
  "text+image": ["text", "image_url"],
  "text+refusal": ["text", "refusal"],
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
  value: unknown,
  path: string,
  kinds: K,
  role: string,
  pending: PendingImages,
): PartOf<K>[] {
  if (typeof value === "string") return [{ type: "text", text: value } as PartOf<K>];
  const allowed = ALLOWED[kinds];
  const listed = allowed.join(" or ");
  if (value === undefined || value === null) {
    throw missing(
      `\`${path}\` is required: a string or an array of ${listed} content parts.`,
      path,
    );
  }
  if (!Array.isArray(value)) {
    throw invalidType(
      `\`${path}\` must be a string or an array of ${listed} content parts, not ${kindOf(value)}.`,
      path,
    );
  }
  if (value.length === 0) throw invalidValue(`\`${path}\` must not be an empty array.`, path);
  return value.map((raw, j) => {
    const at = `${path}[${j}]`;
    if (!isObject(raw)) {
      throw invalidType(
        `\`${at}\` must be a content part object with a \`type\`, not ${kindOf(raw)}.`,
        at,
      );
    }
    const type = raw.type;
    if (typeof type !== "string" || !allowed.includes(type)) {
      if (type === undefined) {
        throw missing(
          `\`${at}.type\`: must be ${allowed.map((t) => `"${t}"`).join(" or ")} (it is missing).`,
          `${at}.type`,
        );
      }
      const why = type === "image_url"
        ? `image_url parts are only allowed in user messages, not in ${role} messages`
        : type === "refusal"
        ? `refusal parts are only allowed in assistant messages, not in ${role} messages`
        : `must be ${allowed.map((t) => `"${t}"`).join(" or ")}${notThis(type)}`;
      throw invalidValue(`\`${at}.type\`: ${why}.`, `${at}.type`);
    }
    const part = type === "image_url"
      ? parseImagePart(raw, at, pending)
      : type === "refusal"
      ? refusalPart(raw, at)
      : textPart(raw, at);
    const cache = parseCacheControl(raw.cache_control, `${at}.cache_control`);
    if (cache && part.type !== "refusal") part.cache = cache;
    return part as PartOf<K>;
  });
}

function textPart(raw: Record<string, unknown>, at: string): TextPart {
  if (typeof raw.text !== "string") {
    throw invalidType(`\`${at}.text\` must be a string, not ${kindOf(raw.text)}.`, `${at}.text`);
  }
  return { type: "text", text: raw.text };
}

function refusalPart(raw: Record<string, unknown>, at: string): RefusalPart {
  if (typeof raw.refusal !== "string") {
    throw invalidType(
      `\`${at}.refusal\` must be a string, not ${kindOf(raw.refusal)}.`,
      `${at}.refusal`,
    );
  }
  return { type: "refusal", text: raw.refusal };
}
