import type { BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import { type OpenBlock, pushInput, pushStop } from "../open_block.ts";
import { mapAnthropicStopReason } from "./stop_reason.ts";
import { fromAnthropicUsage } from "./usage.ts";
import { isObject, type JsonObject, malformed, otherFields, stringField } from "../wire.ts";

/** A content block of the upstream's, as the translator follows it: open, or skipped (one
 * with no canonical form, such as a server tool's, or one already stopped). */
type Block = OpenBlock | { kind: "skipped" };

/** Fields of `message_delta.delta` the finish carries; the others go to its extras. */
const MODELLED_DELTA = new Set(["stop_reason"]);

/**
 * Translates the events of a streamed Anthropic message into canonical events: `start` with
 * the message id; each content block as a canonical block, numbered 0, 1, ... in order of
 * opening whatever the blocks skipped (`text`; `thinking` -> reasoning with `thinking_delta`s
 * as reasoning text and its `signature_delta` as the signature; `redacted_thinking` ->
 * reasoning with its data as `redacted`; `tool_use` -> a tool call with its `input_json_delta`s
 * as argument fragments, `{}` when none came, or for the forced JSON tool `jsonTool` a text
 * block of that JSON); `usage` after `message_start` and each `message_delta` (cumulative);
 * `finish` on `message_stop`. `error` events are the caller's to handle; `ping`, unknown events
 * and deltas are skipped; events out of order are a 502.
 */
export class AnthropicStreamTranslator {
  readonly #jsonTool: string | null;
  readonly #blocks = new Map<number, Block>();
  #opened = 0;
  #started = false;
  #toolCalled = false;
  #usage: JsonObject = {};
  #delta: JsonObject = {};

  constructor(jsonTool: string | null) {
    this.#jsonTool = jsonTool;
  }

  /** Appends the events for one upstream event to `out`; says whether it ended the stream. */
  push(data: JsonObject, out: CanonicalEvent[]): boolean {
    if (data.type === "ping") return false;
    if (data.type === "message_start") {
      this.#start(data, out);
      return false;
    }
    if (!this.#started) throw malformed("stream (an event before message_start)");
    switch (data.type) {
      case "content_block_start":
        this.#open(data, out);
        return false;
      case "content_block_delta":
        this.#fill(data, out);
        return false;
      case "content_block_stop": {
        const block = this.#block(data);
        if (block.kind === "skipped") return false;
        pushStop(block, out);
        this.#blocks.set(blockIndex(data), { kind: "skipped" });
        return false;
      }
      case "message_delta":
        if (isObject(data.delta)) this.#delta = { ...this.#delta, ...data.delta };
        this.#count(data.usage, out);
        return false;
      case "message_stop":
        this.#finish(out);
        return true;
      default:
        return false;
    }
  }

  #start(data: JsonObject, out: CanonicalEvent[]): void {
    const message = data.message;
    const id = isObject(message) ? stringField(message, "id") : null;
    if (!isObject(message) || id === null) throw malformed("stream (message_start without id)");
    if (this.#started) throw malformed("stream (a second message_start)");
    this.#started = true;
    out.push({ type: "start", id });
    this.#count(message.usage, out);
  }

  #open(data: JsonObject, out: CanonicalEvent[]): void {
    const at = blockIndex(data);
    const block = data.content_block;
    if (!isObject(block)) throw malformed("stream (content_block_start without a block)");
    if (this.#blocks.has(at)) throw malformed("stream (a content block started twice)");
    const kind = kindOf(block, this.#jsonTool);
    if (kind === null) {
      this.#blocks.set(at, { kind: "skipped" });
      return;
    }
    const index = this.#opened++;
    const json = block.type === "tool_use" && kind.type === "text";
    const open: OpenBlock = { kind: json ? "json" : kind.type, index, sent: false };
    this.#blocks.set(at, open);
    out.push({ type: "block_start", index, block: kind });
    if (kind.type === "tool_call") this.#toolCalled = true;
    // A block may start with content: a `text` or `thinking` so far, a whole `input`.
    if (open.kind === "text") this.#text(open, stringField(block, "text"), out);
    if (open.kind === "reasoning") {
      this.#reasoning(open, stringField(block, "thinking"), out);
      this.#signature(open, stringField(block, "signature"), out);
    }
    if (open.kind === "tool_call" || open.kind === "json") {
      if (isObject(block.input) && Object.keys(block.input).length > 0) {
        pushInput(open, JSON.stringify(block.input), out);
      }
    }
  }

  #fill(data: JsonObject, out: CanonicalEvent[]): void {
    const block = this.#block(data);
    const delta = data.delta;
    if (!isObject(delta)) throw malformed("stream (content_block_delta without a delta)");
    if (block.kind === "skipped") return;
    switch (delta.type) {
      case "text_delta":
        if (block.kind !== "text") throw malformed("stream (text_delta outside a text block)");
        return this.#text(block, stringField(delta, "text"), out);
      case "thinking_delta":
        if (block.kind !== "reasoning") throw malformed("stream (thinking_delta outside thinking)");
        return this.#reasoning(block, stringField(delta, "thinking"), out);
      case "signature_delta":
        if (block.kind !== "reasoning") {
          throw malformed("stream (signature_delta outside thinking)");
        }
        return this.#signature(block, stringField(delta, "signature"), out);
      case "input_json_delta": {
        if (block.kind !== "tool_call" && block.kind !== "json") {
          throw malformed("stream (input_json_delta outside a tool_use block)");
        }
        const json = stringField(delta, "partial_json");
        if (json) pushInput(block, json, out);
        return;
      }
      default:
        // citations_delta and deltas yet to come: no canonical form.
        return;
    }
  }

  #text(block: { index: number }, text: string | null, out: CanonicalEvent[]): void {
    if (text) out.push({ type: "block_delta", index: block.index, delta: { type: "text", text } });
  }

  #reasoning(block: { index: number }, text: string | null, out: CanonicalEvent[]): void {
    if (text) {
      out.push({ type: "block_delta", index: block.index, delta: { type: "reasoning", text } });
    }
  }

  #signature(block: { index: number }, signature: string | null, out: CanonicalEvent[]): void {
    if (signature) {
      out.push({
        type: "block_delta",
        index: block.index,
        delta: { type: "signature", signature },
      });
    }
  }

  #count(usage: unknown, out: CanonicalEvent[]): void {
    if (!isObject(usage)) return;
    this.#usage = { ...this.#usage, ...numbers(usage) };
    out.push({ type: "usage", usage: fromAnthropicUsage(this.#usage) });
  }

  #finish(out: CanonicalEvent[]): void {
    // Anthropic stops every block; one left open is closed rather than left dangling.
    for (const block of this.#blocks.values()) {
      if (block.kind !== "skipped") pushStop(block, out);
    }
    this.#blocks.clear();
    const stop = mapAnthropicStopReason(this.#delta.stop_reason, this.#toolCalled);
    const finish: Extract<CanonicalEvent, { type: "finish" }> = {
      type: "finish",
      reason: stop.finish,
    };
    if (stop.detail !== undefined) finish.detail = stop.detail;
    const fields = otherFields(this.#delta, MODELLED_DELTA);
    if (fields !== null) finish.extras = { protocol: "anthropic_messages", fields };
    out.push(finish);
  }

  #block(data: JsonObject): Block {
    const block = this.#blocks.get(blockIndex(data));
    if (block === undefined) throw malformed(`stream (${data.type} for a block never started)`);
    return block;
  }
}

/** The canonical kind of a content block, or `null` for one it has none for. */
function kindOf(
  block: JsonObject,
  jsonTool: string | null,
): Exclude<BlockKind, { type: "refusal" }> | null {
  switch (block.type) {
    case "text":
      return { type: "text" };
    case "thinking":
      return { type: "reasoning", style: "anthropic" };
    case "redacted_thinking": {
      const data = stringField(block, "data");
      if (data === null) throw malformed("stream (a redacted_thinking block without data)");
      return { type: "reasoning", redacted: data, style: "anthropic" };
    }
    case "tool_use": {
      const id = stringField(block, "id");
      const name = stringField(block, "name");
      if (id === null || name === null) throw malformed("stream (a tool_use block without id)");
      return name === jsonTool ? { type: "text" } : { type: "tool_call", id, name };
    }
    default:
      return null;
  }
}

function blockIndex(data: JsonObject): number {
  if (typeof data.index !== "number") throw malformed(`stream (${data.type} without an index)`);
  return data.index;
}

function numbers(obj: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(obj).filter(([, v]) => typeof v === "number" || isObject(v)),
  );
}
