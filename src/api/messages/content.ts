/**
 * The `system` and `messages` of a Messages request as canonical messages: each content block
 * one part, in order (`text` -> text, `image` -> image, `document` -> a document (a PDF, base64
 * or by https:// URL, or plain text), `tool_use` -> a tool call with its `input` as JSON text,
 * `tool_result` -> a tool result, `thinking` -> reasoning with its signature,
 * `redacted_thinking` -> reasoning with its data); `cache_control` as a cache marker on its
 * part; a `text` block's `citations` ignored. Block types the canonical model has no part for
 * (`search_result`, server tools' blocks...) and documents of a `content` or `file` source are
 * recorded in `uses`: only an Anthropic upstream takes them. Anthropic's rules for a
 * conversation are checked as it is read: no empty message but a last assistant one, and tool
 * blocks that pair up (see {@link ToolUsePairing}). A `role: "system"` message inside
 * `messages` (the beta Claude Code sends) is a canonical system message at its place (see
 * {@link systemMessage}).
 */
import type {
  DocumentPart,
  ImagePart,
  Message,
  Part,
  ReasoningPart,
  TextPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { type DocumentSource, PDF, pdfSource, TEXT, urlSource } from "../shared/documents.ts";
import type { PendingImages } from "../shared/images.ts";
import { signatureStyle } from "./signature.ts";
import { ToolUsePairing } from "./tool_pairing.ts";
import type { Uses } from "../../canonical/uses.ts";

const ROLES = ["user", "assistant", "system"] as const;
const NON_EMPTY = { nonEmpty: true } as const;
const OPTIONAL_OR_NULL = { optional: true, nullable: true } as const;
const AT_LEAST_ONE = { minItems: 1 } as const;
const MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
const SOURCE_TYPES = ["base64", "url"] as const;
const DOCUMENT_SOURCES = ["base64", "text", "url", "content", "file"] as const;
const HTTPS = /^https:\/\//i;
const PLAIN_HTTP = /^http:/i;
/** Anthropic's words for an empty message. */
const EMPTY =
  "all messages must have non-empty content except for the optional final assistant message";
const BLOCKS = {
  expected: "a string or an array of content blocks",
} as const;
const SYSTEM = { expected: "a string or an array of text blocks" } as const;

/** The block types each role may send, by the canonical part they become. */
const ROLE_BLOCKS: Record<"user" | "assistant" | "system", readonly string[]> = {
  user: ["text", "image", "document", "tool_result"],
  assistant: ["text", "tool_use", "thinking", "redacted_thinking"],
  system: ["text"],
};
/** Block types with a canonical part, and the role that may send each. */
const OWNER: Readonly<Record<string, string>> = {
  text: "any",
  image: "user",
  document: "user",
  tool_result: "user",
  tool_use: "assistant",
  thinking: "assistant",
  redacted_thinking: "assistant",
};

/** Reads blocks into parts; shared by the helpers below. */
interface Context {
  pending: PendingImages;
  uses: Uses;
  /** Names of what was read but cannot be carried on (a back end of another protocol). */
  dropped: Set<string>;
}

const CLEAR_AT = ["next_user_message", "never"] as const;
const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
/** Blocks of a `system` message that change the tools mid-conversation (beta). */
const TOOL_CHANGES = ["tool_addition", "tool_removal"];

/** `system`: a string or text blocks, as one system message (none when absent). */
export function parseSystem(body: Fields): Message[] {
  const r = body.optional("system");
  if (r === undefined) return [];
  if (typeof r.value === "string") {
    return [{ role: "system", parts: [{ type: "text", text: r.value }] }];
  }
  const parts = r.array(SYSTEM).map((item) => textBlock(item.object()));
  return parts.length === 0 ? [] : [{ role: "system", parts }];
}

/** `messages`: a non-empty array of user and assistant (or system) turns, none empty but a last
 * assistant turn (a prefill), whose tool blocks pair up (Anthropic's rules). */
export function parseMessages(body: Fields, ctx: Context): Message[] {
  const pairing = new ToolUsePairing();
  const items = body.array("messages", AT_LEAST_ONE);
  const lastUser = items.findLastIndex((item) =>
    (item.value as { role?: unknown } | null)?.role === "user"
  );
  const messages = items.map((item, i): Message | null => {
    const f = item.object();
    const role = f.oneOf("role", ROLES);
    if (role === "system") return systemMessage(f, i < lastUser, ctx);
    pairing.next(item.path);
    const content = f.get("content");
    const empty = content.value === "" ||
      (Array.isArray(content.value) && content.value.length === 0);
    if (empty && !(role === "assistant" && i === items.length - 1)) throw item.invalid(EMPTY);
    if (typeof content.value === "string") {
      return { role, parts: [{ type: "text", text: content.value }] };
    }
    const parts: Part[] = [];
    for (const block of content.array(BLOCKS)) {
      const part = blockPart(block, role, ctx);
      if (part === null) continue;
      if (part.type === "tool_call") pairing.use(part.id, block);
      if (part.type === "tool_result") pairing.answer(part.callId, block);
      parts.push(part);
    }
    return { role, parts };
  });
  pairing.end();
  return messages.filter((m) => m !== null);
}

/**
 * A `role: "system"` message inside `messages` (Anthropic's mid-conversation beta, which
 * Claude Code sends): a canonical system message at its place, of its text blocks; `null` when
 * it has no text for the model: no `content` (only an `output_config`), or `clear_at:
 * "next_user_message"` with a user message after it (Anthropic no longer shows it then). Its
 * tool additions and removals and its per-turn `output_config` are named in `dropped`. Tool
 * pairing looks through it.
 */
function systemMessage(f: Fields, userAfter: boolean, ctx: Context): Message | null {
  const clear = f.oneOf("clear_at", CLEAR_AT, { optional: true, nullable: true });
  const config = f.object("output_config", { optional: true, nullable: true });
  if (config?.oneOf("effort", EFFORTS, { optional: true, nullable: true })) {
    ctx.dropped.add("messages.output_config");
  }
  const content = f.optional("content");
  if (content === undefined) return null;
  if (content.value === "") throw f.reader.invalid(EMPTY);
  const parts: Part[] = [];
  if (typeof content.value === "string") parts.push({ type: "text", text: content.value });
  else {
    for (const block of content.array(BLOCKS)) {
      const type = (block.value as { type?: unknown } | null)?.type;
      if (typeof type === "string" && TOOL_CHANGES.includes(type)) ctx.dropped.add(type);
      else {
        const part = blockPart(block, "system", ctx);
        if (part !== null) parts.push(part);
      }
    }
  }
  if (clear === "next_user_message" && userAfter) return null;
  return parts.length === 0 ? null : { role: "system", parts };
}

/** One content block as a part; `null` for a block only Anthropic takes (recorded). */
function blockPart(r: Reader, role: "user" | "assistant" | "system", ctx: Context): Part | null {
  const b = r.object();
  const type = b.get("type");
  const name = type.string(NON_EMPTY);
  const owner = OWNER[name];
  if (owner === undefined) {
    ctx.uses.protocolOnly.push({ path: type.path, type: name });
    return null;
  }
  if (!ROLE_BLOCKS[role].includes(name)) {
    throw type.invalid(
      `${name} blocks are only allowed in ${owner} messages, not in ${role} messages`,
    );
  }
  switch (name) {
    case "text":
      return textBlock(b);
    case "image":
      return imageBlock(b, ctx);
    case "document":
      return documentBlock(b, ctx);
    case "tool_use":
      ctx.uses.toolUses.push(r.path);
      return cached(b, {
        type: "tool_call",
        id: b.string("id", NON_EMPTY),
        name: b.string("name", NON_EMPTY),
        arguments: JSON.stringify(b.object("input").value),
      });
    case "tool_result":
      ctx.uses.toolUses.push(r.path);
      return toolResult(b, ctx);
    case "thinking":
      return thinking(b);
    default: // redacted_thinking
      return { type: "reasoning", text: "", redacted: b.string("data"), style: "anthropic" };
  }
}

/** A `text` block (its `citations` read and left aside). */
function textBlock(b: Fields): TextPart {
  b.optional("citations");
  return cached(b, { type: "text", text: b.string("text", NON_EMPTY) });
}

/** An `image` block: a base64 source (decoded with the request's other images) or an https://
 * URL. */
function imageBlock(b: Fields, ctx: Context): ImagePart {
  ctx.uses.images.push(b.reader.path);
  const source = b.object("source");
  const kind = source.oneOf("type", SOURCE_TYPES);
  if (kind === "url") {
    const field = source.get("url");
    const url = field.string();
    const part: ImagePart = { type: "image", source: { kind: "url", url } };
    if (PLAIN_HTTP.test(url)) {
      // Refused with the request's other images, in the chat endpoint's words (decodeImages).
      ctx.pending.fields.push({ url, param: field.path });
      ctx.pending.parts.push(part);
    } else if (!HTTPS.test(url) || !URL.canParse(url)) {
      throw field.invalid(`expected an https:// URL, but got ${quote(url)}`, "invalid_image");
    }
    return cached(b, part);
  }
  const mediaType = source.oneOf("media_type", MEDIA_TYPES);
  const data = source.get("data");
  const part: ImagePart = { type: "image", source: { kind: "url", url: "" } };
  ctx.pending.fields.push({ url: `data:${mediaType};base64,${data.string()}`, param: data.path });
  ctx.pending.parts.push(part);
  return cached(b, part);
}

/**
 * A `document` block: a PDF (a `base64` source, or a `url` one at an https:// URL) or plain
 * text (a `text` source), with its `title`, `context` and `citations`; `null` for a `content`
 * or `file` source, which only Anthropic takes (recorded).
 */
function documentBlock(b: Fields, ctx: Context): DocumentPart | null {
  const source = b.object("source");
  const type = source.get("type");
  const kind = type.oneOf(DOCUMENT_SOURCES);
  if (kind === "content" || kind === "file") {
    ctx.uses.protocolOnly.push({ path: type.path, type: `document (${kind} source)` });
    return null;
  }
  const part: DocumentPart = { type: "document", source: documentSource(source, kind) };
  if (kind !== "text") ctx.uses.documents.push(b.reader.path);
  // Anthropic's title, context and citations may each be null: the same as left out.
  const title = b.string("title", OPTIONAL_OR_NULL);
  if (typeof title === "string") part.title = title;
  const context = b.string("context", OPTIONAL_OR_NULL);
  if (typeof context === "string") part.context = context;
  const citations = b.object("citations", OPTIONAL_OR_NULL)?.boolean("enabled", OPTIONAL);
  if (citations !== undefined) part.citations = citations;
  return cached(b, part);
}

/** A document's `base64` (PDF), `text` or `url` source. */
function documentSource(source: Fields, kind: "base64" | "text" | "url"): DocumentSource {
  if (kind === "url") return urlSource(source.get("url"));
  if (kind === "text") {
    source.oneOf("media_type", [TEXT]);
    return { kind: "text", text: source.string("data") };
  }
  source.oneOf("media_type", [PDF]);
  const data = source.get("data");
  return pdfSource(data.string(), data);
}

/** A `tool_result` block: its content a string or text, image and document blocks. */
function toolResult(b: Fields, ctx: Context): ToolResultPart {
  const part: ToolResultPart = {
    type: "tool_result",
    callId: b.string("tool_use_id", NON_EMPTY),
    content: [],
    isError: b.boolean("is_error", OPTIONAL) ?? false,
  };
  const content = b.optional("content");
  if (typeof content?.value === "string") {
    if (content.value !== "") part.content.push({ type: "text", text: content.value });
  } else if (content !== undefined) {
    for (const item of content.array(BLOCKS)) {
      const inner = item.object();
      const type = inner.get("type");
      const name = type.string(NON_EMPTY);
      if (name === "text") part.content.push(textBlock(inner));
      else if (name === "image") part.content.push(imageBlock(inner, ctx));
      else if (name === "document") {
        const document = documentBlock(inner, ctx);
        if (document !== null) part.content.push(document);
      } else ctx.uses.protocolOnly.push({ path: type.path, type: name });
    }
  }
  return cached(b, part);
}

/** A `thinking` block: Anthropic's signature kept for Anthropic; the gateway's own mark says
 * which other style the reasoning came from, with that back end's signature if it gave one. */
function thinking(b: Fields): ReasoningPart {
  const text = b.string("thinking");
  const { style, signature } = signatureStyle(b.string("signature"));
  const part: ReasoningPart = { type: "reasoning", text, style };
  if (signature !== undefined) part.signature = signature;
  return part;
}

/** The part with the block's `cache_control` as its cache marker. */
function cached<P extends Exclude<Part, ReasoningPart | { type: "refusal" }>>(
  b: Fields,
  part: P,
): P {
  const cache = parseCacheControl(b.object("cache_control", OPTIONAL));
  if (cache) part.cache = cache;
  return part;
}
