import type {
  DocumentPart,
  ImagePart,
  RefusalPart,
  TextPart,
} from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { dataUrlSource } from "../shared/documents.ts";
import { parseImagePart, type PendingImages } from "../shared/images.ts";

/** The content part types a role may send: `image_url` and `file` only from users, `refusal`
 * only from the assistant (OpenAI's rules). */
type PartKinds = "text" | "text+media" | "text+refusal";

type PartType = "text" | "image_url" | "file" | "refusal";

const ALLOWED: Record<PartKinds, readonly PartType[]> = {
  "text": ["text"],
  "text+media": ["text", "image_url", "file"],
  "text+refusal": ["text", "refusal"],
};

/** The array rules of each kind of content. */
type ContentRules = { readonly minItems: 1; readonly expected: string };
const ARRAY_RULES: Record<PartKinds, ContentRules> = {
  "text": { minItems: 1, expected: "a string or an array of text content parts" },
  "text+media": {
    minItems: 1,
    expected: "a string or an array of text, image_url or file content parts",
  },
  "text+refusal": {
    minItems: 1,
    expected: "a string or an array of text or refusal content parts",
  },
};

/** What {@link parseContent} makes of each kind. */
type PartOf<K extends PartKinds> = K extends "text+media" ? TextPart | ImagePart | DocumentPart
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
    const part: TextPart | ImagePart | DocumentPart | RefusalPart = type === "image_url"
      ? parseImagePart(p, pending)
      : type === "file"
      ? parseFilePart(p)
      : type === "refusal"
      ? { type: "refusal", text: p.string("refusal") }
      : { type: "text", text: p.string("text") };
    const cache = parseCacheControl(p.object("cache_control", OPTIONAL));
    if (cache && part.type !== "refusal") part.cache = cache;
    return part as PartOf<K>;
  });
}

/**
 * A `file` content part as a document: its `file_data` a base64 data URL of a PDF or of text,
 * its `filename` the title. A `file_id` is refused: the gateway's files are batch input only.
 */
function parseFilePart(p: Fields): DocumentPart {
  const file = p.object("file");
  const id = file.optional("file_id");
  if (id !== undefined) {
    throw id.invalid(
      "file ids are not supported here (the gateway's Files API holds batch input only); send the file as file_data",
    );
  }
  const data = file.optional("file_data");
  if (data === undefined) {
    throw file.reader.invalid(
      "expected file_data (a base64 data URL), but got neither file_data nor file_id",
    );
  }
  const part: DocumentPart = { type: "document", source: dataUrlSource(data) };
  const title = file.string("filename", OPTIONAL);
  if (title !== undefined) part.title = title;
  return part;
}

/** A part's `type`, one of `allowed`; a type that only another role may send says so. */
function partType(p: Fields, allowed: readonly PartType[], role: string): PartType {
  const type = p.get("type");
  const value = type.value;
  if (
    (value === "image_url" || value === "file" || value === "refusal") &&
    !allowed.includes(value)
  ) {
    const owner = value === "refusal" ? "assistant" : "user";
    throw type.invalid(
      `${value} parts are only allowed in ${owner} messages, not in ${role} messages`,
    );
  }
  return type.oneOf(allowed);
}
