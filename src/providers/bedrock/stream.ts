/** Canonical events from the events of a ConverseStream answer. */
import { type OpenBlock, pushInput, pushStop } from "../open_block.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import { isObject, type JsonObject, malformed, stringField } from "../wire.ts";
import { BEDROCK_REASONING_STYLE } from "./messages.ts";
import { mapConverseStopReason } from "./stop_reason.ts";
import { fromConverseUsage } from "./usage.ts";

/** The events after `messageStart` that carry the answer (others, such as an
 * `initial-response`, are skipped wherever they come). */
const KNOWN_EVENTS = new Set([
  "contentBlockStart",
  "contentBlockDelta",
  "contentBlockStop",
  "messageStop",
  "metadata",
]);

/**
 * Translates ConverseStream events (by `:event-type`) into canonical events: `messageStart` ->
 * `start`; a content block opened by its `contentBlockStart` (a tool use) or its first delta
 * (text, reasoning text or signature, redacted reasoning), numbered 0, 1, ... in order of
 * opening; deltas as text, reasoning, signature and argument fragments; `contentBlockStop`
 * closes it; `messageStop` keeps the stop reason; `metadata` gives the usage and ends the
 * answer (`finish`). The forced JSON tool `jsonTool`'s call is a text block of its input.
 * Unknown events are skipped; events out of order are a 502.
 */
export class ConverseStreamTranslator {
  readonly #jsonTool: string | null;
  readonly #blocks = new Map<number, OpenBlock | null>();
  #opened = 0;
  #started = false;
  #stopReason: unknown = undefined;
  #stopped = false;
  #toolCalled = false;

  constructor(jsonTool: string | null) {
    this.#jsonTool = jsonTool;
  }

  /** Appends the events for one upstream event to `out`; says whether it ended the answer. */
  push(type: string, data: JsonObject, out: CanonicalEvent[]): boolean {
    if (type === "messageStart") {
      if (this.#started) throw malformed("stream (a second messageStart)");
      this.#started = true;
      out.push({ type: "start" });
      return false;
    }
    if (!KNOWN_EVENTS.has(type)) return false;
    if (!this.#started) throw malformed(`stream (${type} before messageStart)`);
    switch (type) {
      case "contentBlockStart":
        this.#start(data, out);
        return false;
      case "contentBlockDelta":
        this.#delta(data, out);
        return false;
      case "contentBlockStop": {
        const at = blockIndex(data);
        const block = this.#blocks.get(at);
        if (block === undefined) throw malformed("stream (contentBlockStop for no block)");
        if (block !== null) pushStop(block, out);
        this.#blocks.set(at, null);
        return false;
      }
      case "messageStop":
        this.#stopReason = data.stopReason;
        this.#stopped = true;
        return false;
      case "metadata":
        if (isObject(data.usage)) out.push({ type: "usage", usage: fromConverseUsage(data.usage) });
        this.#finish(out);
        return true;
      default:
        return false;
    }
  }

  /** The closing events when the body ended without `metadata`: the finish after a
   * `messageStop`, else a 502. */
  end(): CanonicalEvent[] {
    if (!this.#stopped) throw malformed("stream: it ended before messageStop");
    const out: CanonicalEvent[] = [];
    this.#finish(out);
    return out;
  }

  #start(data: JsonObject, out: CanonicalEvent[]): void {
    const at = blockIndex(data);
    const start = isObject(data.start) ? data.start : {};
    if (this.#blocks.has(at)) throw malformed("stream (a content block started twice)");
    // Other starts (none are documented but a tool use's) open with their first delta.
    if (!isObject(start.toolUse)) return;
    const id = stringField(start.toolUse, "toolUseId");
    const name = stringField(start.toolUse, "name");
    if (id === null || name === null) throw malformed("stream (a toolUse start without id)");
    if (name === this.#jsonTool) {
      this.#open(at, "json", out, { type: "text" });
      return;
    }
    this.#toolCalled = true;
    this.#open(at, "tool_call", out, { type: "tool_call", id, name });
  }

  #delta(data: JsonObject, out: CanonicalEvent[]): void {
    const at = blockIndex(data);
    const delta = data.delta;
    if (!isObject(delta)) throw malformed("stream (contentBlockDelta without a delta)");
    let block = this.#blocks.get(at);
    // A block already stopped.
    if (block === null) return;
    if (typeof delta.text === "string") {
      block ??= this.#open(at, "text", out, { type: "text" });
      if (block.kind !== "text") throw malformed("stream (text in a non-text block)");
      if (delta.text !== "") {
        out.push({
          type: "block_delta",
          index: block.index,
          delta: { type: "text", text: delta.text },
        });
      }
      return;
    }
    if (isObject(delta.toolUse)) {
      if (block?.kind !== "tool_call" && block?.kind !== "json") {
        throw malformed("stream (toolUse input outside a toolUse)");
      }
      const json = stringField(delta.toolUse, "input");
      if (json) pushInput(block, json, out);
      return;
    }
    if (isObject(delta.reasoningContent)) {
      const reasoning = delta.reasoningContent;
      const redacted = stringField(reasoning, "redactedContent");
      if (redacted !== null) {
        if (block !== undefined) throw malformed("stream (redacted reasoning inside a block)");
        this.#open(at, "reasoning", out, {
          type: "reasoning",
          redacted,
          style: BEDROCK_REASONING_STYLE,
        });
        return;
      }
      block ??= this.#open(at, "reasoning", out, {
        type: "reasoning",
        style: BEDROCK_REASONING_STYLE,
      });
      if (block.kind !== "reasoning") {
        throw malformed("stream (reasoning in a non-reasoning block)");
      }
      const text = stringField(reasoning, "text");
      if (text) {
        out.push({ type: "block_delta", index: block.index, delta: { type: "reasoning", text } });
      }
      const signature = stringField(reasoning, "signature");
      if (signature) {
        out.push({
          type: "block_delta",
          index: block.index,
          delta: { type: "signature", signature },
        });
      }
    }
    // Deltas yet to come (citations...): no canonical form.
  }

  #open(
    at: number,
    kind: OpenBlock["kind"],
    out: CanonicalEvent[],
    block: Extract<CanonicalEvent, { type: "block_start" }>["block"],
  ): OpenBlock {
    const open: OpenBlock = { kind, index: this.#opened++, sent: false };
    this.#blocks.set(at, open);
    out.push({ type: "block_start", index: open.index, block });
    return open;
  }

  #finish(out: CanonicalEvent[]): void {
    if (!this.#stopped) throw malformed("stream (metadata before messageStop)");
    for (const block of this.#blocks.values()) if (block !== null) pushStop(block, out);
    this.#blocks.clear();
    const stop = mapConverseStopReason(this.#stopReason, this.#toolCalled);
    out.push(
      stop.detail === undefined
        ? { type: "finish", reason: stop.finish }
        : { type: "finish", reason: stop.finish, detail: stop.detail },
    );
  }
}

function blockIndex(data: JsonObject): number {
  const index = data.contentBlockIndex;
  if (typeof index !== "number") throw malformed("stream (an event without contentBlockIndex)");
  return index;
}
