/** The conversation of a Converse request, from the canonical one. */
import type {
  CacheMarker,
  DocumentPart,
  ImagePart,
  Message,
  Part,
  ReasoningPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import { invalidRequest } from "../../errors.ts";
import { parseImageDataUrl, UNCAPPED } from "../../http/image_data_url.ts";
import { toolInput } from "../anthropic/messages.ts";
import { systemReminder } from "../system_reminder.ts";
import type {
  CachePoint,
  ContentBlock,
  ConverseMessage,
  DocumentBlock,
  ImageBlock,
  ReasoningBlock,
  TextBlock,
} from "./types.ts";

/** The reasoning style Converse's signatures are: Claude's, which Anthropic's Messages API
 * checks as well (its signatures hold across Anthropic, Bedrock and Vertex). */
export const BEDROCK_REASONING_STYLE = "anthropic";

/** The text of a tool result that has none (Converse refuses a blank text block). */
export const EMPTY_RESULT = "(empty)";

/** The `system` and `messages` of a Converse request. */
export interface ConverseConversation {
  system: (TextBlock | CachePoint)[];
  messages: ConverseMessage[];
}

/** The longest document name Bedrock takes. */
const NAME_CHARS = 200;

const FORMATS: Record<string, ImageBlock["image"]["format"]> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/**
 * The Converse conversation for a canonical one:
 * - system and developer messages before the first assistant turn as `system`; one after it
 *   stays at its place as user text marked as a system reminder;
 * - consecutive turns of one role merged (Converse alternates user and assistant), tool results
 *   (`toolResult`, `status: "error"` for an error) first in their user turn, reasoning first in
 *   its assistant turn;
 * - reasoning of Claude's style as `reasoningContent` (its text with its signature, or the
 *   redacted payload); reasoning without a signature, or of another style, is left out;
 * - images as bytes (base64) with their format; an image URL is a 400 (Bedrock reads images
 *   only as bytes or from S3);
 * - documents (in user turns and tool results) as `document` blocks: a PDF's bytes (`pdf`) or
 *   a text (`txt`), with its context and citations setting, named after its title (see
 *   {@link documentName}; `document` without one), each name distinct in the request; a
 *   document URL is a 400 (Bedrock reads documents only as bytes or from S3);
 * - a cache marker as a `cachePoint` block after its part; blank text dropped.
 *
 * Throws a 400 naming the field for tool-call arguments that are not a JSON object, an image
 * or document given by URL, and a conversation with no turn left.
 */
export function toConverseConversation(
  conversation: readonly Message[],
  dropped: Set<string>,
): ConverseConversation {
  const system: (TextBlock | CachePoint)[] = [];
  const messages: ConverseMessage[] = [];
  /** The document names given so far (Bedrock wants them distinct). */
  const names = new Set<string>();
  let began = false;
  conversation.forEach((message, i) => {
    const at = `messages[${i}]`;
    switch (message.role) {
      case "system":
      case "developer": {
        if (began) {
          const reminder = systemReminder(message.parts);
          if (reminder !== null) addTurn(messages, "user", [{ text: reminder }]);
          break;
        }
        for (const part of message.parts) {
          if (part.type === "text") system.push(...withCache(text(part), part.cache));
        }
        break;
      }
      case "user":
      case "tool":
        addTurn(messages, "user", userBlocks(message.parts, at, dropped, names));
        break;
      case "assistant":
        began = true;
        addTurn(messages, "assistant", assistantBlocks(message.parts, at));
    }
  });
  if (messages.length === 0) {
    throw invalidRequest(
      "messages must contain at least one user or assistant message with content.",
      "messages",
    );
  }
  return { system, messages };
}

/** Appends blocks as a new turn, or to the last turn of the same role (leading blocks after
 * the ones already leading). */
function addTurn(
  messages: ConverseMessage[],
  role: ConverseMessage["role"],
  blocks: ContentBlock[],
) {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last?.role !== role) {
    messages.push({ role, content: blocks });
    return;
  }
  let at = last.content.findIndex((b) => !leads(b));
  if (at < 0) at = last.content.length;
  last.content.splice(at, 0, ...blocks.filter(leads));
  last.content.push(...blocks.filter((b) => !leads(b)));
}

/** Blocks that go first in their turn (with the cache points right after them). */
function leads(block: ContentBlock): boolean {
  return "toolResult" in block || "reasoningContent" in block;
}

/** The blocks with the leading ones first, a cache point staying after the block it follows. */
function leadingFirst(blocks: ContentBlock[]): ContentBlock[] {
  const groups: ContentBlock[][] = [];
  for (const block of blocks) {
    if ("cachePoint" in block && groups.length > 0) groups.at(-1)!.push(block);
    else groups.push([block]);
  }
  const first = groups.filter((g) => leads(g[0]!));
  const rest = groups.filter((g) => !leads(g[0]!));
  return [...first, ...rest].flat();
}

function userBlocks(
  parts: readonly Part[],
  at: string,
  dropped: Set<string>,
  names: Set<string>,
): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  parts.forEach((part, j) => {
    if (part.type === "text") blocks.push(...withCache(text(part), part.cache));
    else if (part.type === "image") {
      const param = `${at}.content[${j}].image_url.url`;
      blocks.push(...withCache([image(part, param, dropped)], part.cache));
    } else if (part.type === "document") {
      const param = `${at}.content[${j}].file.file_url`;
      blocks.push(...withCache([document(part, param, names)], part.cache));
    } else if (part.type === "tool_result") {
      const result = toolResult(part, `${at}.content[${j}].content`, dropped, names);
      blocks.push(...withCache([result], part.cache));
    }
  });
  return leadingFirst(blocks);
}

function assistantBlocks(parts: readonly Part[], at: string): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  let calls = 0;
  for (const part of parts) {
    switch (part.type) {
      case "text":
        blocks.push(...withCache(text(part), part.cache));
        break;
      case "refusal":
        blocks.push(...text(part));
        break;
      case "reasoning":
        blocks.push(...reasoning(part));
        break;
      case "tool_call": {
        const param = `${at}.tool_calls[${calls++}].function.arguments`;
        blocks.push(...withCache([{
          toolUse: { toolUseId: part.id, name: part.name, input: toolInput(part.arguments, param) },
        }], part.cache));
      }
    }
  }
  return leadingFirst(blocks);
}

function text(part: { text: string }): TextBlock[] {
  return part.text.trim() === "" ? [] : [{ text: part.text }];
}

function image(part: ImagePart, param: string, dropped: Set<string>): ImageBlock {
  if (part.detail !== undefined && part.detail !== "auto") dropped.add("detail");
  const { source } = part;
  if (source.kind === "url" && !source.url.startsWith("data:")) {
    throw invalidRequest(
      `${param} must be a base64 image data URL: Bedrock takes images as bytes, not URLs.`,
      param,
      "invalid_image",
    );
  }
  const url = source.kind === "url"
    ? source.url
    : `data:${source.mediaType};base64,${source.base64}`;
  const checked = parseImageDataUrl(url, param, UNCAPPED);
  const format = FORMATS[checked.mediaType];
  if (format === undefined) {
    throw invalidRequest(
      `${param} must be a PNG, JPEG, GIF or WebP image for Bedrock, but it is ${checked.mediaType}.`,
      param,
      "invalid_image",
    );
  }
  return { image: { format, source: { bytes: checked.base64 } } };
}

/** A document block for `part`, its name made distinct among `names` (and added to them); a
 * 400 naming `param` for a document given by URL. */
function document(part: DocumentPart, param: string, names: Set<string>): DocumentBlock {
  const { source } = part;
  if (source.kind === "url") {
    throw invalidRequest(
      `${param} must be a base64 PDF or a text document: Bedrock takes documents as bytes, not URLs.`,
      param,
    );
  }
  const name = distinctName(documentName(part.title), names);
  const block: DocumentBlock = {
    document: source.kind === "data"
      ? { format: "pdf", name, source: { bytes: source.base64 } }
      : { format: "txt", name, source: { text: source.text } },
  };
  if (part.context !== undefined) block.document.context = part.context;
  if (part.citations !== undefined) block.document.citations = { enabled: part.citations };
  return block;
}

/**
 * A document name Bedrock takes, from a title: accents taken off letters, characters other
 * than ASCII letters, digits, whitespace, hyphens, parentheses and square brackets as spaces,
 * whitespace runs as one space, trimmed and cut to 200 characters; `document` when nothing is
 * left (or no title).
 */
function documentName(title: string | undefined): string {
  const name = (title ?? "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, NAME_CHARS)
    .trimEnd();
  return name === "" ? "document" : name;
}

/** `name`, or the first of `name (2)`, `name (3)`... not in `taken` (cut to stay within 200
 * characters); added to `taken`. */
function distinctName(name: string, taken: Set<string>): string {
  let distinct = name;
  for (let n = 2; taken.has(distinct); n++) {
    const suffix = ` (${n})`;
    distinct = `${name.slice(0, NAME_CHARS - suffix.length).trimEnd()}${suffix}`;
  }
  taken.add(distinct);
  return distinct;
}

function toolResult(
  part: ToolResultPart,
  at: string,
  dropped: Set<string>,
  names: Set<string>,
): ContentBlock {
  const content: (TextBlock | ImageBlock | DocumentBlock)[] = [];
  part.content.forEach((p, j) => {
    if (p.type === "text") content.push(...text(p));
    else if (p.type === "image") content.push(image(p, `${at}[${j}].image_url.url`, dropped));
    else content.push(document(p, `${at}[${j}].file.file_url`, names));
  });
  return {
    toolResult: {
      toolUseId: part.callId,
      // Converse wants some content, and refuses blank text.
      content: content.length > 0 ? content : [{ text: EMPTY_RESULT }],
      ...(part.isError ? { status: "error" as const } : {}),
    },
  };
}

function reasoning(part: ReasoningPart): ReasoningBlock[] {
  if (part.style !== BEDROCK_REASONING_STYLE) return [];
  if (part.redacted !== undefined) {
    return [{ reasoningContent: { redactedContent: part.redacted } }];
  }
  if (!part.signature) return [];
  return [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }];
}

/** The blocks, with a cache point after them when the part had a marker (and a block). */
function withCache<B extends ContentBlock>(
  blocks: B[],
  marker: CacheMarker | undefined,
): (B | CachePoint)[] {
  if (marker === undefined || blocks.length === 0) return blocks;
  return [...blocks, cachePoint(marker)];
}

/** A cache point for a marker (its ttl when it is one Bedrock takes). */
export function cachePoint(marker: CacheMarker): CachePoint {
  return marker.ttl === "5m" || marker.ttl === "1h"
    ? { cachePoint: { type: "default", ttl: marker.ttl } }
    : { cachePoint: { type: "default" } };
}

/**
 * The messages with their tool calls and results as text (`[tool call NAME (ID): {...}]`,
 * `[tool result for ID]: ...`, images and documents of results kept), for a request that offers
 * no tools:
 * Converse refuses `toolUse` and `toolResult` blocks without a `toolConfig`, and defining the
 * tools would let the model call what the caller did not offer.
 */
export function toolBlocksAsText(messages: readonly ConverseMessage[]): ConverseMessage[] {
  return messages.map((message) => ({
    role: message.role,
    content: message.content.flatMap((block): ContentBlock[] => {
      if ("toolUse" in block) {
        const { toolUseId, name, input } = block.toolUse;
        return [{ text: `[tool call ${name} (${toolUseId}): ${JSON.stringify(input)}]` }];
      }
      if (!("toolResult" in block)) return [block];
      const { toolUseId, content, status } = block.toolResult;
      const label = status === "error" ? "tool error" : "tool result";
      const texts = content.flatMap((c) => "text" in c ? [c.text] : []).join("\n");
      return [
        { text: `[${label} for ${toolUseId}]: ${texts}` },
        ...content.filter((c): c is ImageBlock | DocumentBlock => !("text" in c)),
      ];
    }),
  }));
}
