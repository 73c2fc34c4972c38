/** Canonical stream events for tests of the front doors (what a back end would produce). */
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { FinishReason, Usage } from "../../src/canonical/result.ts";

/** The events of a streamed text answer: start, one text block with these pieces, usage and
 * finish. */
export function textEvents(
  pieces: readonly string[],
  usage: Usage = { input: 11, output: 3 },
  finish: FinishReason = "stop",
): CanonicalEvent[] {
  return [
    { type: "start", id: "chatcmpl-test" },
    { type: "block_start", index: 0, block: { type: "text" } },
    ...pieces.map((text): CanonicalEvent => ({
      type: "block_delta",
      index: 0,
      delta: { type: "text", text },
    })),
    { type: "block_stop", index: 0 },
    { type: "usage", usage },
    { type: "finish", reason: finish },
  ];
}

/** The events of a tool call block at `index`, its arguments in pieces. */
export function toolCallEvents(
  index: number,
  id: string,
  name: string,
  pieces: readonly string[],
): CanonicalEvent[] {
  return [
    { type: "block_start", index, block: { type: "tool_call", id, name } },
    ...pieces.map((json): CanonicalEvent => ({
      type: "block_delta",
      index,
      delta: { type: "arguments", json },
    })),
    { type: "block_stop", index },
  ];
}
