import type {
  CacheMarker,
  DocumentPart,
  ImagePart,
  Message as CanonicalMessage,
  Part,
  ReasoningPart,
  ToolResultPart,
} from "../../canonical/conversation.ts";
import { invalidRequest } from "../../errors.ts";
import { systemReminder } from "../system_reminder.ts";
import { parseImageDataUrl, UNCAPPED } from "../../http/image_data_url.ts";
import type {
  CacheControl,
  DocumentBlock,
  ImageBlock,
  ImageMediaType,
  Message,
  RedactedThinkingBlock,
  RequestBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from "../../types/anthropic.ts";

/** The conversation of a Messages request. */
export interface AnthropicMessages {
  system: TextBlock[];
  messages: Message[];
}

/**
 * The `system` and `messages` of a Messages request for a canonical conversation:
 * - system and developer messages before the first assistant turn as `system`, in order; one
 *   after an assistant turn stays at its place, as user text marked as a system reminder
 *   (`../system_reminder.ts`:
 *   the mid-conversation `role: "system"` message is a beta that needs the client's
 *   `anthropic-beta` header, which a canonical request does not carry);
 * - consecutive turns of one role merged (Anthropic alternates user and assistant);
 * - `tool` messages' results as `tool_result` blocks of the next user turn, before anything else
 *   in it; assistant reasoning as `thinking` (with its signature) or `redacted_thinking` blocks
 *   first in their turn. Reasoning from another style, or without a signature, is left out:
 *   Anthropic can only check its own;
 * - refusals sent back as text (Anthropic has no refusal input);
 * - images as base64 sources (the data checked again, uncapped), or `https://` URLs as URL
 *   sources; documents as `document` blocks (a PDF's base64 or URL source, or a text source)
 *   with their title, context and citations setting, in user turns and tool results;
 *   tool-call arguments as `input` objects;
 * - blank text dropped (Anthropic rejects it); cache markers as `cache_control` on the block
 *   (a marker on a dropped blank text moves to the block before it).
 *
 * `dropped` gets `detail` for an image detail Anthropic cannot honour. Throws a 400 naming the
 * field for tool-call arguments that are not a JSON object, and when no turn is left.
 */
export function toAnthropicMessages(
  conversation: readonly CanonicalMessage[],
  dropped: Set<string>,
): AnthropicMessages {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  /** Whether the model spoke yet: a system message after that stays at its place. */
  let began = false;
  conversation.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (message.role === "assistant") began = true;
    switch (message.role) {
      case "system":
      case "developer": {
        if (began) {
          const reminder = systemReminder(message.parts);
          if (reminder !== null) addTurn(messages, "user", [{ type: "text", text: reminder }]);
          break;
        }
        system.push(...blocksOf(message.parts, (part) => part.type === "text" ? text(part) : []));
        break;
      }
      case "user":
      case "tool":
        addTurn(messages, "user", userBlocks(message.parts, at, dropped));
        break;
      case "assistant":
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

/** Appends blocks to the conversation: a new turn, or merged into the last one of the same
 * role, its leading blocks (tool results, thinking) after the ones already leading. */
function addTurn(messages: Message[], role: Message["role"], blocks: RequestBlock[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last?.role !== role || typeof last.content === "string") {
    messages.push({ role, content: blocks });
    return;
  }
  const leading = blocks.filter(leads);
  let at = last.content.findIndex((b) => !leads(b));
  if (at < 0) at = last.content.length;
  last.content.splice(at, 0, ...leading);
  last.content.push(...blocks.filter((b) => !leads(b)));
}

/** Blocks Anthropic wants first in their turn. */
function leads(block: RequestBlock): boolean {
  return block.type === "tool_result" || block.type === "thinking" ||
    block.type === "redacted_thinking";
}

/** The blocks of a message's parts, in order: `convert` gives each part's block (or none);
 * the cache marker of a part without a block goes to the last block that can carry one. */
function blocksOf<P extends Part, B extends RequestBlock>(
  parts: readonly P[],
  convert: (part: P, index: number) => B | B[],
): B[] {
  const blocks: B[] = [];
  parts.forEach((part, j) => {
    const converted = convert(part, j);
    const made = Array.isArray(converted) ? converted : [converted];
    blocks.push(...made);
    const marker = "cache" in part ? part.cache : undefined;
    if (made.length > 0 || marker === undefined) return;
    const carrier = blocks.findLast((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
    if (carrier) (carrier as { cache_control?: CacheControl }).cache_control = cacheControl(marker);
  });
  return blocks;
}

function userBlocks(parts: readonly Part[], at: string, dropped: Set<string>): RequestBlock[] {
  const blocks = blocksOf<Part, RequestBlock>(parts, (part, j): RequestBlock | RequestBlock[] => {
    switch (part.type) {
      case "text":
        return text(part);
      case "image":
        return image(part, `${at}.content[${j}].image_url.url`, dropped);
      case "document":
        return document(part);
      case "tool_result":
        return toolResult(part, `${at}.content`, dropped);
      default:
        return [];
    }
  });
  return [...blocks.filter(leads), ...blocks.filter((b) => !leads(b))];
}

function assistantBlocks(parts: readonly Part[], at: string): RequestBlock[] {
  let calls = 0;
  const blocks = blocksOf<Part, RequestBlock>(parts, (part): RequestBlock | RequestBlock[] => {
    switch (part.type) {
      case "text":
        return text(part);
      case "refusal":
        return text({ text: part.text });
      case "reasoning":
        return reasoning(part);
      case "tool_call": {
        const param = `${at}.tool_calls[${calls++}].function.arguments`;
        const block: ToolUseBlock = {
          type: "tool_use",
          id: part.id,
          name: part.name,
          input: toolInput(part.arguments, param),
        };
        return withCache(block, part.cache);
      }
      default:
        return [];
    }
  });
  return [...blocks.filter(leads), ...blocks.filter((b) => !leads(b))];
}

function text(part: { text: string; cache?: CacheMarker }): TextBlock | [] {
  if (part.text.trim() === "") return [];
  const block: TextBlock = { type: "text", text: part.text };
  return withCache(block, part.cache);
}

function image(part: ImagePart, param: string, dropped: Set<string>): ImageBlock {
  if (part.detail !== undefined && part.detail !== "auto") dropped.add("detail");
  const { source } = part;
  if (source.kind === "url" && !source.url.startsWith("data:")) {
    if (!/^https:\/\//i.test(source.url)) {
      throw invalidRequest(
        `${param} must be an https:// URL or a base64 image data URL: Anthropic fetches only https:// image URLs.`,
        param,
        "invalid_image",
      );
    }
    const block: ImageBlock = { type: "image", source: { type: "url", url: source.url } };
    return withCache(block, part.cache);
  }
  const url = source.kind === "url"
    ? source.url
    : `data:${source.mediaType};base64,${source.base64}`;
  const checked = parseImageDataUrl(url, param, UNCAPPED);
  const block: ImageBlock = {
    type: "image",
    source: {
      type: "base64",
      media_type: checked.mediaType as ImageMediaType,
      data: checked.base64,
    },
  };
  return withCache(block, part.cache);
}

function document(part: DocumentPart): DocumentBlock {
  const { source } = part;
  const block: DocumentBlock = {
    type: "document",
    source: source.kind === "data"
      ? { type: "base64", media_type: source.mediaType, data: source.base64 }
      : source.kind === "url"
      ? { type: "url", url: source.url }
      : { type: "text", media_type: "text/plain", data: source.text },
  };
  if (part.title !== undefined) block.title = part.title;
  if (part.context !== undefined) block.context = part.context;
  if (part.citations !== undefined) block.citations = { enabled: part.citations };
  return withCache(block, part.cache);
}

function toolResult(part: ToolResultPart, at: string, dropped: Set<string>): ToolResultBlock {
  const block: ToolResultBlock = { type: "tool_result", tool_use_id: part.callId };
  const content = blocksOf<
    ToolResultPart["content"][number],
    TextBlock | ImageBlock | DocumentBlock
  >(
    part.content,
    (p, j) =>
      p.type === "text"
        ? text(p)
        : p.type === "image"
        ? image(p, `${at}[${j}].image_url.url`, dropped)
        : document(p),
  );
  const only = content[0];
  if (content.length === 1 && only?.type === "text" && only.cache_control === undefined) {
    block.content = only.text;
  } else if (content.length > 0) block.content = content;
  if (part.isError) block.is_error = true;
  return withCache(block, part.cache);
}

function reasoning(part: ReasoningPart): ThinkingBlock | RedactedThinkingBlock | [] {
  if (part.style !== "anthropic") return [];
  if (part.redacted !== undefined) return { type: "redacted_thinking", data: part.redacted };
  if (!part.signature) return [];
  return { type: "thinking", thinking: part.text, signature: part.signature };
}

function withCache<B extends { cache_control?: CacheControl }>(
  block: B,
  marker: CacheMarker | undefined,
): B {
  if (marker !== undefined) block.cache_control = cacheControl(marker);
  return block;
}

function cacheControl(marker: CacheMarker): CacheControl {
  return marker.ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: marker.ttl };
}

/** A tool call's arguments as the object a tool-use block's `input` is; a 400 naming `param`
 * when they are not a JSON object. */
export function toolInput(args: string, param: string): Record<string, unknown> {
  if (args.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  return value as Record<string, unknown>;
}
