/**
 * Going on with a cut stream on another route (DESIGN §6.3, `continue_on_failure`): what the
 * client has seen of the answer so far, the request that asks another route to go on from it
 * (the partial answer as the assistant's prefill), and the continuation's events renumbered so
 * that the client sees one stream: its first text block merged into the text block left open,
 * its other blocks after the ones already opened, its `start` dropped.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";

/** What a stream has sent of its answer, and whether another route could go on from it. */
export class PartialAnswer {
  /** Blocks opened so far (their indexes are 0 to opened - 1). */
  opened = 0;
  /** A text block still open, to go on in. */
  openText: number | null = null;
  /** The answer's text so far. */
  text = "";
  /** Whether only text was sent and the answer did not finish (reasoning and tool calls cannot
   * be handed to another route as a prefill). */
  continuable = true;

  /** Notes events the client was sent. */
  add(events: readonly CanonicalEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case "block_start":
          this.opened = Math.max(this.opened, event.index + 1);
          if (event.block.type === "text") this.openText = event.index;
          else this.continuable = false;
          break;
        case "block_delta":
          if (event.delta.type === "text") this.text += event.delta.text;
          break;
        case "block_stop":
          if (event.index === this.openText) this.openText = null;
          break;
        case "finish":
          this.continuable = false;
          break;
      }
    }
  }
}

/** The request that asks a route to go on from `partial`: the conversation with the partial
 * answer as the assistant's last message, without trailing whitespace (which Anthropic refuses
 * at the end of a prefill). */
export function prefilled(req: CanonicalRequest, partial: PartialAnswer): CanonicalRequest {
  const text = partial.text.trimEnd();
  if (text === "") return req;
  return {
    ...req,
    messages: [...req.messages, { role: "assistant", parts: [{ type: "text", text }] }],
  };
}

/** Renumbers a continuation's event batches after `partial` (see the module doc). The
 * whitespace the prefill left out, which the client already has, is dropped from the start of
 * the continued text. */
export function continuation(
  partial: PartialAnswer,
): (events: readonly CanonicalEvent[]) => CanonicalEvent[] {
  const open = partial.openText;
  const base = partial.opened;
  let skip = partial.text.slice(partial.text.trimEnd().length);
  /** Whether the continuation's block 0 goes on in the open block; decided at its start. */
  let merged: boolean | null = null;
  const at = (index: number) => merged && index === 0 ? open! : base + index - (merged ? 1 : 0);
  return (events) => {
    const out: CanonicalEvent[] = [];
    for (const event of events) {
      if (event.type === "start") continue;
      if (event.type === "block_start" && merged === null) {
        merged = open !== null && event.index === 0 && event.block.type === "text";
        if (merged) continue;
        if (open !== null) out.push({ type: "block_stop", index: open });
      }
      if (event.type === "block_delta" && merged && event.index === 0 && skip !== "") {
        if (event.delta.type !== "text") continue;
        let text = event.delta.text;
        while (skip !== "" && text !== "" && text[0] === skip[0]) {
          text = text.slice(1);
          skip = skip.slice(1);
        }
        if (text !== "") skip = "";
        if (text === "") continue;
        out.push({ ...event, index: at(0), delta: { type: "text", text } });
        continue;
      }
      if ("index" in event) out.push({ ...event, index: at(event.index) });
      else out.push(event);
    }
    return out;
  };
}
