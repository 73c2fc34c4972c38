/**
 * A content block a streaming translator has opened, for back ends whose tool calls stream
 * their input as JSON fragments (Anthropic's Messages, Bedrock's Converse), and the events that
 * fill and end it.
 */
import type { CanonicalEvent } from "../canonical/events.ts";

/** An open block, by the canonical index it was given. */
export interface OpenBlock {
  /** `json`: the forced JSON tool, whose input is the answer's text. */
  kind: "text" | "reasoning" | "tool_call" | "json";
  index: number;
  /** Whether input JSON came (a tool call without any gets `{}`). */
  sent: boolean;
}

/** A fragment of a tool's input: its arguments, or the JSON answer's text. */
export function pushInput(block: OpenBlock, json: string, out: CanonicalEvent[]): void {
  block.sent = true;
  out.push({
    type: "block_delta",
    index: block.index,
    delta: block.kind === "json" ? { type: "text", text: json } : { type: "arguments", json },
  });
}

/** The block's end; a tool whose input never came gets `{}` first. */
export function pushStop(block: OpenBlock, out: CanonicalEvent[]): void {
  if ((block.kind === "tool_call" || block.kind === "json") && !block.sent) {
    pushInput(block, "{}", out);
  }
  out.push({ type: "block_stop", index: block.index });
}
