/** A canonical result from a Converse answer. */
import type { Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import { isObject, type JsonObject, malformed, stringField } from "../wire.ts";
import { BEDROCK_REASONING_STYLE } from "./messages.ts";
import { mapConverseStopReason } from "./stop_reason.ts";
import { fromConverseUsage } from "./usage.ts";

/**
 * The result of a Converse answer (`{output: {message: {content}}, stopReason, usage}`): text
 * blocks as text (and a `citationsContent` block's text, its citations left), `toolUse` as tool
 * calls (their `input` as JSON text), `reasoningContent` as
 * reasoning of Claude's style (text with signature, or the redacted payload); the forced JSON
 * tool `jsonTool`'s call as a text part holding its input; blocks with no canonical form
 * skipped. A body without the message is a 502.
 */
export function fromConverseResponse(data: unknown, jsonTool: string | null): CanonicalResult {
  const message = isObject(data) && isObject(data.output) ? data.output.message : undefined;
  if (!isObject(data) || !isObject(message) || !Array.isArray(message.content)) {
    throw malformed("Converse answer (no output.message.content)");
  }
  const parts: Part[] = [];
  for (const block of message.content) {
    if (!isObject(block)) throw malformed("Converse answer (a content block is not an object)");
    const part = partOf(block, jsonTool);
    if (part !== null) parts.push(part);
  }
  const toolCalled = parts.some((p) => p.type === "tool_call");
  const stop = mapConverseStopReason(data.stopReason, toolCalled);
  const result: CanonicalResult = {
    parts,
    finish: stop.finish,
    usage: fromConverseUsage(data.usage),
  };
  if (stop.detail !== undefined) result.stopDetail = stop.detail;
  return result;
}

function partOf(block: JsonObject, jsonTool: string | null): Part | null {
  if (typeof block.text === "string") return { type: "text", text: block.text };
  if (isObject(block.citationsContent)) {
    // A document's citations on: the text it wrote, its citations left (no canonical form).
    const content = block.citationsContent.content;
    const texts = Array.isArray(content)
      ? content.flatMap((c) => isObject(c) && typeof c.text === "string" ? [c.text] : [])
      : [];
    return texts.length > 0 ? { type: "text", text: texts.join("") } : null;
  }
  if (isObject(block.toolUse)) {
    const id = stringField(block.toolUse, "toolUseId");
    const name = stringField(block.toolUse, "name");
    if (id === null || name === null) throw malformed("Converse answer (a toolUse without id)");
    if (name === jsonTool) return { type: "text", text: JSON.stringify(block.toolUse.input ?? {}) };
    return {
      type: "tool_call",
      id,
      name,
      arguments: JSON.stringify(block.toolUse.input ?? {}),
    };
  }
  if (isObject(block.reasoningContent)) {
    const reasoning = block.reasoningContent;
    const redacted = stringField(reasoning, "redactedContent");
    if (redacted !== null) {
      return { type: "reasoning", text: "", redacted, style: BEDROCK_REASONING_STYLE };
    }
    if (isObject(reasoning.reasoningText)) {
      const text = stringField(reasoning.reasoningText, "text") ?? "";
      const signature = stringField(reasoning.reasoningText, "signature");
      return {
        type: "reasoning",
        text,
        ...(signature !== null ? { signature } : {}),
        style: BEDROCK_REASONING_STYLE,
      };
    }
  }
  return null;
}
