/**
 * Canonical results as Messages API responses: `{id: "msg_...", type: "message", role:
 * "assistant", model, content, stop_reason, stop_sequence, usage}` with the parts as content
 * blocks in order (reasoning -> `thinking` with its signature, or `redacted_thinking`; text and
 * refusals -> `text`; tool calls -> `tool_use` with `input` parsed from the arguments, as a
 * streaming SDK would parse them when they are cut short).
 */
import type { Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { MessagesResponse, ResponseBlock } from "../../types/anthropic.ts";
import { isObject } from "../../validation/reader.ts";
import { parsePartialObject } from "./partial_json.ts";
import { styleSignature } from "./signature.ts";
import { toStopReason } from "./stop.ts";
import { toMessagesUsage } from "./usage.ts";

/** The message id: the back end's when it is a `msg_` id, else one made of the request id. */
export function messageId(id: string | undefined, requestId: string): string {
  return id?.startsWith("msg_") ? id : `msg_${requestId.replace(/^req_/, "")}`;
}

/** The response for a result, under the gateway's model id. */
export function renderMessage(
  result: CanonicalResult,
  head: { id: string; model: string },
): MessagesResponse {
  return {
    id: head.id,
    type: "message",
    role: "assistant",
    model: head.model,
    content: contentBlocks(result.parts),
    stop_reason: toStopReason(result.finish, result.stopDetail),
    stop_sequence: null,
    usage: toMessagesUsage(result.usage),
  };
}

/** The content blocks of an answer's parts, less the bare signatures after its last text (see
 * stream.ts). */
export function contentBlocks(parts: readonly Part[]): ResponseBlock[] {
  let end = parts.length;
  while (end > 0 && isBareSignature(parts[end - 1]!)) end--;
  if (end < parts.length && parts[end - 1]?.type === "text") parts = parts.slice(0, end);
  return parts.flatMap(blockOf);
}

/** Whether a part is reasoning of a back end other than Anthropic with no text of its own: a
 * signature alone (Gemini's on a text part). */
export function isBareSignature(part: Part): boolean {
  return part.type === "reasoning" && part.text === "" && part.redacted === undefined &&
    part.style !== undefined && part.style !== "anthropic";
}

/** A part's block (none for an empty text). */
function blockOf(part: Part): ResponseBlock[] {
  switch (part.type) {
    case "text":
    case "refusal":
      return part.text === "" ? [] : [{ type: "text", text: part.text }];
    case "reasoning":
      if (part.redacted !== undefined) return [{ type: "redacted_thinking", data: part.redacted }];
      return [{
        type: "thinking",
        thinking: part.text,
        signature: styleSignature(part.style, part.signature),
      }];
    case "tool_call":
      return [{ type: "tool_use", id: part.id, name: part.name, input: toolInput(part.arguments) }];
    default:
      return [];
  }
}

/** A tool call's arguments as the `input` object. Arguments cut short (by `max_tokens`) read as
 * an SDK reads them streamed (see {@link parsePartialObject}); arguments that are not a JSON
 * object even so (a model's broken JSON) are kept as the text they are, under `_raw`. */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === "") return {};
  try {
    const value = JSON.parse(args);
    if (isObject(value)) return value;
  } catch {
    // below
  }
  return parsePartialObject(args) ?? { _raw: args };
}
