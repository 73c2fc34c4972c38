/**
 * A cached answer as a stream: the canonical events of a whole result (its input usage, blocks
 * opened, filled and closed in order, then its usage and finish), in batches of about {@link BATCH_CHARS} of
 * content, each batch made when the client pulls for it.
 */
import type { Part } from "../canonical/conversation.ts";
import type { BlockDelta, BlockKind, CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";

/** Characters of content per batch (one client write) at most, about. */
export const BATCH_CHARS = 16 * 1024;

/** The events of `result` in batches (see the module comment). */
export function* replayEvents(result: CanonicalResult): Generator<CanonicalEvent[]> {
  // The input usage comes first too, as back ends that count the prompt before answering
  // report it (the Messages door's `message_start` shows it).
  const { reasoning: _, ...input } = result.usage;
  let batch: CanonicalEvent[] = [{ type: "start" }, {
    type: "usage",
    usage: { ...input, output: 0 },
  }];
  let chars = 0;
  let index = 0;
  for (const part of result.parts) {
    const block = blockOf(part);
    if (block === null) continue;
    batch.push({ type: "block_start", index, block });
    for (const delta of deltasOf(part)) {
      const text = delta.type === "arguments"
        ? delta.json
        : delta.type === "signature"
        ? delta.signature
        : delta.text;
      // Long content is cut into pieces, so that no one write holds all of it.
      for (let at = 0; at < text.length; at += BATCH_CHARS) {
        const piece = text.slice(at, at + BATCH_CHARS);
        batch.push({ type: "block_delta", index, delta: withText(delta, piece) });
        chars += piece.length;
        if (chars >= BATCH_CHARS) {
          yield batch;
          batch = [];
          chars = 0;
        }
      }
    }
    batch.push({ type: "block_stop", index });
    index++;
  }
  batch.push({ type: "usage", usage: result.usage });
  const finish: CanonicalEvent = { type: "finish", reason: result.finish };
  if (result.stopDetail !== undefined) finish.detail = result.stopDetail;
  if (result.extras !== undefined) finish.extras = result.extras;
  batch.push(finish);
  yield batch;
}

/** The block a part streams as, or `null` for parts an answer does not stream (images, tool
 * results). */
function blockOf(part: Part): BlockKind | null {
  switch (part.type) {
    case "text":
    case "refusal":
      return { type: part.type };
    case "tool_call":
      return { type: "tool_call", id: part.id, name: part.name };
    case "reasoning": {
      const block: BlockKind = { type: "reasoning" };
      if (part.redacted !== undefined) block.redacted = part.redacted;
      if (part.style !== undefined) block.style = part.style;
      return block;
    }
    default:
      return null;
  }
}

/** The deltas that fill a part's block (none for empty content). */
function deltasOf(part: Part): BlockDelta[] {
  switch (part.type) {
    case "text":
      return part.text === "" ? [] : [{ type: "text", text: part.text }];
    case "refusal":
      return part.text === "" ? [] : [{ type: "refusal", text: part.text }];
    case "tool_call":
      return part.arguments === "" ? [] : [{ type: "arguments", json: part.arguments }];
    case "reasoning": {
      const deltas: BlockDelta[] = [];
      if (part.text !== "") deltas.push({ type: "reasoning", text: part.text });
      if (part.signature !== undefined) {
        deltas.push({ type: "signature", signature: part.signature });
      }
      return deltas;
    }
    default:
      return [];
  }
}

/** `delta` with `piece` as its content. */
function withText(delta: BlockDelta, piece: string): BlockDelta {
  switch (delta.type) {
    case "arguments":
      return { type: "arguments", json: piece };
    case "signature":
      return { type: "signature", signature: piece };
    default:
      return { ...delta, text: piece };
  }
}
