import type { Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import { mapAnthropicStopReason } from "./stop_reason.ts";
import { fromAnthropicUsage } from "./usage.ts";
import { isObject, type JsonObject, malformed, otherFields, stringField } from "../wire.ts";

/** Fields of a message the canonical result carries; the others go to its extras. */
const MODELLED = new Set(["id", "type", "role", "model", "content", "stop_reason", "usage"]);

/**
 * An Anthropic message as a canonical result, its blocks in order: `text` -> text;
 * `thinking` -> reasoning with its signature and `redacted_thinking` -> reasoning with the
 * redacted data (style `anthropic`, so they can be sent back); `tool_use` -> a tool call with
 * the JSON text of `input`, or, for the forced JSON tool `jsonTool`, a text part holding that
 * JSON; other blocks (server tools' results...) skipped. Fields not modelled (`stop_sequence`,
 * `stop_details`...) go to the extras. A malformed answer is a 502.
 */
export function fromAnthropicMessage(data: unknown, jsonTool: string | null): CanonicalResult {
  if (!isObject(data) || !Array.isArray(data.content)) throw malformed("message (no content)");
  const id = stringField(data, "id");
  if (id === null) throw malformed("message (no id)");
  const parts: Part[] = [];
  for (const block of data.content) {
    if (!isObject(block)) throw malformed("message (a content block that is not an object)");
    const part = partOf(block, jsonTool);
    if (part !== null) parts.push(part);
  }
  const stop = mapAnthropicStopReason(
    data.stop_reason,
    parts.some((p) => p.type === "tool_call"),
  );
  const result: CanonicalResult = {
    id,
    parts,
    finish: stop.finish,
    usage: fromAnthropicUsage(data.usage),
  };
  if (stop.detail !== undefined) result.stopDetail = stop.detail;
  const extras = otherFields(data, MODELLED);
  if (extras !== null) result.extras = { protocol: "anthropic_messages", fields: extras };
  return result;
}

function partOf(block: JsonObject, jsonTool: string | null): Part | null {
  switch (block.type) {
    case "text": {
      const text = stringField(block, "text") ?? "";
      return text === "" ? null : { type: "text", text };
    }
    case "thinking": {
      const part: Part = {
        type: "reasoning",
        text: stringField(block, "thinking") ?? "",
        style: "anthropic",
      };
      const signature = stringField(block, "signature");
      if (signature) part.signature = signature;
      return part;
    }
    case "redacted_thinking": {
      const data = stringField(block, "data");
      if (data === null) throw malformed("message (a redacted_thinking block without data)");
      return { type: "reasoning", text: "", redacted: data, style: "anthropic" };
    }
    case "tool_use": {
      const id = stringField(block, "id");
      const name = stringField(block, "name");
      if (id === null || name === null) throw malformed("message (a tool_use without id)");
      const json = JSON.stringify(isObject(block.input) ? block.input : {});
      return name === jsonTool
        ? { type: "text", text: json }
        : { type: "tool_call", id, name, arguments: json };
    }
    default:
      return null;
  }
}
