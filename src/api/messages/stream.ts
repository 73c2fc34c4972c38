/**
 * Canonical stream events as the Messages API's SSE events, in Anthropic's documented order:
 * `message_start` (with the input usage) and a `ping`; then each content block as
 * `content_block_start`, its `content_block_delta`s (`text_delta`, `thinking_delta`,
 * `signature_delta`, `input_json_delta`) and `content_block_stop`, one block after the other;
 * `message_delta` with the stop reason and the usage; `message_stop`. A failure after the
 * stream began is an `error` event.
 *
 * Input usage in `message_start`: the back end's count when it reports one with the start of
 * its answer (before any content), else the gateway's count of the prompt (`estimate`: the
 * simulator's exact count, an estimate for OpenAI-style back ends). `message_delta` carries the
 * back end's final usage, input and cache counts included (as Anthropic's newer API versions
 * do), so an SDK's final message has the real numbers.
 *
 * Blocks that a back end interleaves (OpenAI-style parallel tool calls) are sent whole one
 * after the other: a block's events wait until the blocks opened before it have stopped.
 *
 * A bare signature after the answer's text (Gemini signs its last text part) is left out: a
 * thinking block after the text would be the message's last block, which clients such as
 * `claude -p` report as the answer (an empty one). Whole answers leave it out the same way
 * (response.ts); a signed thought before the text, or a bare signature followed by more
 * blocks, is sent.
 */
import type { BlockDelta, BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import type { FinishReason, Usage } from "../../canonical/result.ts";
import type { ApiError } from "../../errors.ts";
import type { StreamRenderer } from "../../http/sse_response.ts";
import { isBareSignature, messageId } from "./response.ts";
import { styleSignature } from "./signature.ts";
import { toStopReason } from "./stop.ts";
import { toMessagesUsage } from "./usage.ts";

/** What a stream's events share. */
export interface MessagesStreamHead {
  /** The gateway's request id: the message id when the back end gives none. */
  requestId: string;
  /** The gateway's model id. */
  model: string;
  /** The gateway's count of the prompt's tokens, for `message_start` when the back end has
   * not reported its own yet. */
  estimate: number;
}

/** One content block on its way out. */
interface Block {
  /** Anthropic's index: the order of opening. */
  index: number;
  kind: BlockKind;
  /** Events not yet written, while a block before this one is still open. */
  waiting: string;
  stopped: boolean;
  /** A thinking block's signature came (else the gateway's own is sent at its end). */
  signed: boolean;
}

const encoder = new TextEncoder();

/** One SSE event of the Messages API: its `event:` name is its `type`. */
export function sseEvent(data: { type: string; [field: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Renders one stream's event batches as Messages API events (see the module doc). */
export class MessagesStreamRenderer implements StreamRenderer {
  readonly #head: MessagesStreamHead;
  #started = false;
  #id: string;
  #usage: Usage | null = null;
  /** Blocks by canonical index. */
  readonly #blocks = new Map<number, Block>();
  /** Blocks not yet written whole, in order of opening; the first one streams live. */
  readonly #queue: Block[] = [];
  #finished = false;
  /** The kind of the block opened last. */
  #last: BlockKind | null = null;
  /** A reasoning block opened right after a text block, held back (its events) until it shows
   * it is more than a bare signature, or another block follows; left out at the finish. */
  #held: { at: number; events: CanonicalEvent[] } | null = null;

  constructor(head: MessagesStreamHead) {
    this.#head = head;
    this.#id = messageId(undefined, head.requestId);
  }

  render(events: readonly CanonicalEvent[]): Uint8Array | null {
    let out = "";
    if (!this.#started) out += this.#start(events);
    for (const event of events) out += this.#push(event);
    return out === "" ? null : encoder.encode(out);
  }

  end(): Uint8Array {
    return new Uint8Array();
  }

  error(error: ApiError): Uint8Array {
    const { type, error: detail } = error.toAnthropicBody();
    return encoder.encode(sseEvent({ type, error: detail }));
  }

  /** `message_start` and a `ping`, with the input usage known before any content. */
  #start(events: readonly CanonicalEvent[]): string {
    this.#started = true;
    let usage: Usage = { input: this.#head.estimate, output: 0 };
    for (const event of events) {
      if (event.type === "start" && event.id !== undefined) {
        this.#id = messageId(event.id, this.#head.requestId);
      }
      if (event.type === "usage") usage = { ...event.usage, output: 0 };
      if (event.type.startsWith("block")) break;
    }
    const message = {
      id: this.#id,
      type: "message",
      role: "assistant",
      model: this.#head.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: toMessagesUsage(usage),
    };
    return sseEvent({ type: "message_start", message }) +
      sseEvent({ type: "ping" });
  }

  #push(event: CanonicalEvent): string {
    const held = this.#held;
    if (held !== null) {
      const own = event.type !== "block_start" && "index" in event && event.index === held.at;
      const thought = event.type === "block_delta" && event.delta.type === "reasoning" &&
        event.delta.text !== "";
      if (own && !thought) {
        held.events.push(event);
        return "";
      }
      this.#held = null;
      if (event.type !== "finish" && event.type !== "usage") {
        let out = "";
        for (const e of held.events) out += this.#push(e);
        return out + this.#push(event);
      }
    }
    if (
      event.type === "block_start" && this.#last?.type === "text" &&
      event.block.type === "reasoning" && isBareSignature({ ...event.block, text: "" })
    ) {
      this.#last = event.block;
      this.#held = { at: event.index, events: [event] };
      return "";
    }
    switch (event.type) {
      case "start":
        return "";
      case "block_start":
        this.#last = event.block;
        return this.#open(event.index, event.block);
      case "block_delta":
        return this.#delta(event.index, event.delta);
      case "block_stop":
        return this.#stop(event.index);
      case "usage":
        this.#usage = event.usage;
        return "";
      case "finish":
        return this.#finish(event.reason, event.detail);
    }
  }

  #open(at: number, kind: BlockKind): string {
    const block: Block = {
      index: this.#blocks.size,
      kind,
      waiting: "",
      stopped: false,
      signed: false,
    };
    this.#blocks.set(at, block);
    this.#queue.push(block);
    return this.#write(
      block,
      sseEvent({
        type: "content_block_start",
        index: block.index,
        content_block: startBlock(kind),
      }),
    );
  }

  #delta(at: number, delta: BlockDelta): string {
    const block = this.#blocks.get(at);
    if (block === undefined || block.stopped) return "";
    const wire = deltaOf(block, delta);
    if (wire === null) return "";
    if (delta.type === "signature") block.signed = true;
    return this.#write(
      block,
      sseEvent({ type: "content_block_delta", index: block.index, delta: wire }),
    );
  }

  #stop(at: number): string {
    const block = this.#blocks.get(at);
    if (block === undefined || block.stopped) return "";
    let out = "";
    const { kind } = block;
    if (kind.type === "reasoning" && kind.redacted === undefined && !block.signed) {
      const signature = styleSignature(kind.style);
      out += this.#write(
        block,
        sseEvent({
          type: "content_block_delta",
          index: block.index,
          delta: { type: "signature_delta", signature },
        }),
      );
    }
    out += this.#write(block, sseEvent({ type: "content_block_stop", index: block.index }));
    block.stopped = true;
    return out + this.#advance();
  }

  /** The event now if the block is the live one, else kept until it is. */
  #write(block: Block, event: string): string {
    if (this.#queue[0] === block) return event;
    block.waiting += event;
    return "";
  }

  /** After the live block stopped: the next blocks' waiting events, up to the next one still
   * open (which becomes the live one). */
  #advance(): string {
    let out = "";
    while (this.#queue[0]?.stopped) {
      this.#queue.shift();
      const next = this.#queue[0];
      if (next === undefined) break;
      out += next.waiting;
      next.waiting = "";
    }
    return out;
  }

  #finish(reason: FinishReason, detail: string | undefined): string {
    if (this.#finished) return "";
    this.#finished = true;
    let out = "";
    // Every block ends before the message does, even one the back end left open.
    for (const [at, block] of this.#blocks) if (!block.stopped) out += this.#stop(at);
    const usage = this.#usage ?? { input: this.#head.estimate, output: 0 };
    out += sseEvent({
      type: "message_delta",
      delta: { stop_reason: toStopReason(reason, detail), stop_sequence: null },
      usage: toMessagesUsage(usage),
    });
    return out + sseEvent({ type: "message_stop" });
  }
}

/** A block's `content_block_start` body. */
function startBlock(kind: BlockKind): Record<string, unknown> {
  switch (kind.type) {
    case "text":
    case "refusal":
      return { type: "text", text: "" };
    case "reasoning":
      return kind.redacted !== undefined
        ? { type: "redacted_thinking", data: kind.redacted }
        : { type: "thinking", thinking: "", signature: "" };
    case "tool_call":
      return { type: "tool_use", id: kind.id, name: kind.name, input: {} };
  }
}

/** A canonical delta as the block's wire delta; `null` when it has none (empty text, pieces
 * of a redacted block). */
function deltaOf(block: Block, delta: BlockDelta): Record<string, unknown> | null {
  const redacted = block.kind.type === "reasoning" && block.kind.redacted !== undefined;
  switch (delta.type) {
    case "text":
    case "refusal":
      return delta.text === "" ? null : { type: "text_delta", text: delta.text };
    case "reasoning":
      return delta.text === "" || redacted
        ? null
        : { type: "thinking_delta", thinking: delta.text };
    case "signature":
      if (redacted || block.kind.type !== "reasoning") return null;
      return {
        type: "signature_delta",
        signature: styleSignature(block.kind.style, delta.signature),
      };
    case "arguments":
      return delta.json === "" ? null : { type: "input_json_delta", partial_json: delta.json };
  }
}
