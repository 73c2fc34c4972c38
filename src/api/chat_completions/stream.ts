/**
 * Canonical stream events as `chat.completion.chunk` SSE events (spec §2.6, §4.2 rule 3): one
 * id, time and model on every chunk; the role in the first; text as `delta.content`, reasoning
 * as `delta.reasoning_content`, refusals as `delta.refusal`; each tool call's first fragment
 * with its index, id, type and name, then pieces of its arguments; `finish_reason` only on the
 * last choice chunk, whose delta is empty; with `stream_options.include_usage` every chunk has
 * `usage: null` and a last chunk with no choices has the usage; then `data: [DONE]`.
 *
 * A reasoning block that carries a signature or a redacted payload is sent whole, when it ends,
 * as `delta.thinking_blocks: [block]` (LiteLLM's field): a client appends the blocks it gets
 * to the message it sends back, with no merging of fragments.
 */
import type { Extras } from "../../canonical/conversation.ts";
import type { BlockDelta, BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import type { FinishReason, Usage } from "../../canonical/result.ts";
import type { ApiError } from "../../errors.ts";
import { doneEvent, encodeEvent, encodeEvents } from "../../http/sse.ts";
import type { StreamRenderer } from "../../http/sse_response.ts";
import { isObject } from "../../validation/reader.ts";
import { fillIn, openAIFields } from "./extras.ts";
import { renderFinish } from "./finish.ts";
import { completionId, thinkingBlock } from "./response.ts";
import { renderUsage } from "./usage.ts";
import type { ChatChunk, ChunkChoice, WireDelta } from "./wire.ts";

/** What every chunk of one stream shares, and how the stream is to be rendered. */
export interface StreamHead {
  /** The gateway's request id: the completion id when the back end gives none. */
  requestId: string;
  created: number;
  /** The gateway's model id. */
  model: string;
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Leave the reasoning out (OpenRouter's `reasoning.exclude`). */
  excludeReasoning: boolean;
}

/** Stands for a text chunk's content in its template. */
const TEMPLATE_MARK = "\u0000switchyard-text\u0000";
const TEMPLATE_MARK_JSON = JSON.stringify(TEMPLATE_MARK);

/** Chunk fields the gateway writes itself; an upstream's extras never replace them. */
const OWN_FIELDS = new Set(["id", "object", "created", "model", "choices", "usage"]);

/** A reasoning block being streamed, kept whole for its thinking block. */
interface OpenReasoning {
  text: string;
  signature?: string;
  redacted?: string;
  style?: string;
}

/** Renders one stream's event batches as chat completion chunks (see the module doc). */
export class ChatChunkRenderer implements StreamRenderer {
  readonly #head: StreamHead;
  #id: string;
  /** Top-level fields of an `openai_chat` back end (`system_fingerprint`...), on every chunk. */
  #extra: [string, unknown][] = [];
  #roleSent = false;
  /** Tool call index (0, 1, ...) of each tool-call block, by block index. */
  readonly #toolIndex = new Map<number, number>();
  readonly #reasoning = new Map<number, OpenReasoning>();
  #usage: Usage | null = null;
  #usageExtras: unknown;
  #finished = false;
  /** The text around a text chunk's content (see {@link #textChunk}); rebuilt when the id or
   * the extras change. */
  #template: [before: string, after: string] | null = null;

  constructor(head: StreamHead) {
    this.#head = head;
    this.#id = completionId(undefined, head.requestId);
  }

  render(events: readonly CanonicalEvent[]): Uint8Array | null {
    const out: (ChatChunk | string)[] = [];
    for (const event of events) this.#push(event, out);
    return out.length === 0 ? null : encodeEvents(out);
  }

  end(): Uint8Array {
    if (!this.#head.includeUsage) return doneEvent();
    // Zeros when the back end reported no usage: a client that asked for the chunk gets one.
    const usage = renderUsage(this.#usage ?? { input: 0, output: 0 });
    fillIn(usage as unknown as Record<string, unknown>, this.#usageExtras);
    const chunk = this.#chunk([]);
    chunk.usage = usage;
    const bytes = encodeEvent(chunk);
    const done = doneEvent();
    const all = new Uint8Array(bytes.length + done.length);
    all.set(bytes);
    all.set(done, bytes.length);
    return all;
  }

  error(error: ApiError): Uint8Array {
    return encodeEvent(error.toBody());
  }

  #push(event: CanonicalEvent, out: (ChatChunk | string)[]): void {
    switch (event.type) {
      case "start":
        if (event.id !== undefined) this.#id = completionId(event.id, this.#head.requestId);
        this.#template = null;
        this.#takeExtras(event.extras);
        return;
      case "block_start":
        this.#start(event.index, event.block, out);
        return;
      case "block_delta":
        this.#delta(event.index, event.delta, out);
        return;
      case "block_stop":
        this.#stop(event.index, out);
        return;
      case "usage":
        this.#usage = event.usage;
        return;
      case "finish":
        this.#finish(event.reason, event.detail, event.extras, out);
        return;
    }
  }

  #start(index: number, block: BlockKind, out: (ChatChunk | string)[]): void {
    if (block.type === "tool_call") {
      const call = this.#toolIndex.size;
      this.#toolIndex.set(index, call);
      const fragment = {
        index: call,
        id: block.id,
        type: "function" as const,
        function: { name: block.name, arguments: "" },
      };
      if (this.#roleSent) {
        out.push(this.#deltaChunk({ tool_calls: [fragment] }));
      } else {
        this.#roleSent = true;
        out.push(this.#deltaChunk({ role: "assistant", content: null, tool_calls: [fragment] }));
      }
      return;
    }
    if (block.type === "reasoning") {
      const open: OpenReasoning = { text: "" };
      if (block.redacted !== undefined) open.redacted = block.redacted;
      if (block.style !== undefined) open.style = block.style;
      this.#reasoning.set(index, open);
    }
  }

  #delta(index: number, delta: BlockDelta, out: (ChatChunk | string)[]): void {
    switch (delta.type) {
      case "text":
        if (delta.text === "") return;
        this.#sendRole(out);
        if (delta.logprobs === undefined) out.push(this.#textChunk(delta.text));
        else {
          const logprobs = { content: delta.logprobs, refusal: null };
          out.push(this.#deltaChunk({ content: delta.text }, logprobs));
        }
        return;
      case "refusal":
        if (delta.text === "") return;
        this.#sendRole(out);
        out.push(this.#deltaChunk(
          { refusal: delta.text },
          delta.logprobs === undefined ? null : { content: null, refusal: delta.logprobs },
        ));
        return;
      case "arguments": {
        const call = this.#toolIndex.get(index);
        if (call === undefined || delta.json === "") return;
        this.#emit({ tool_calls: [{ index: call, function: { arguments: delta.json } }] }, out);
        return;
      }
      case "reasoning": {
        const open = this.#reasoning.get(index);
        if (open) open.text += delta.text;
        if (!this.#head.excludeReasoning && delta.text !== "") {
          this.#emit({ reasoning_content: delta.text }, out);
        }
        return;
      }
      case "signature": {
        const open = this.#reasoning.get(index);
        if (open) open.signature = (open.signature ?? "") + delta.signature;
        return;
      }
    }
  }

  #stop(index: number, out: (ChatChunk | string)[]): void {
    const open = this.#reasoning.get(index);
    if (!open) return;
    this.#reasoning.delete(index);
    if (this.#head.excludeReasoning) return;
    const block = thinkingBlock({ type: "reasoning", ...open });
    if (block) this.#emit({ thinking_blocks: [block] }, out);
  }

  #finish(
    reason: FinishReason,
    detail: string | undefined,
    extras: Extras | undefined,
    out: (ChatChunk | string)[],
  ): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#takeExtras(extras);
    const fields = openAIFields(extras);
    this.#usageExtras = fields?.usage;
    // The back end's leftovers for the last choice (logprobs, annotations gathered over the
    // stream): a delta goes in a chunk of its own, the finish chunk's delta staying empty.
    const { delta, ...rest } = firstChoice(fields?.choices);
    if (isObject(delta) && Object.keys(delta).length > 0) this.#emit(delta as WireDelta, out);
    this.#sendRole(out);
    const choice: ChunkChoice = {
      index: 0,
      delta: {},
      logprobs: null,
      ...renderFinish(reason, detail),
    };
    fillIn(choice as unknown as Record<string, unknown>, rest);
    out.push(this.#chunk([choice]));
  }

  /** A chunk of content, after the role chunk if none was sent yet. */
  #emit(delta: WireDelta, out: (ChatChunk | string)[]): void {
    this.#sendRole(out);
    out.push(this.#deltaChunk(delta));
  }

  /**
   * The first chunk, `{role: "assistant", content: ""}`, of a message that does not start with
   * a tool call: sent with the first content, not when a block opens, so that an upstream that
   * fails before writing anything is still answered with an HTTP error.
   */
  #sendRole(out: (ChatChunk | string)[]): void {
    if (this.#roleSent) return;
    this.#roleSent = true;
    out.push(this.#deltaChunk({ role: "assistant", content: "" }));
  }

  #takeExtras(extras: Extras | undefined): void {
    const fields = openAIFields(extras);
    if (!fields) return;
    this.#template = null;
    for (const [key, value] of Object.entries(fields)) {
      if (OWN_FIELDS.has(key) || value === undefined) continue;
      const at = this.#extra.findIndex(([k]) => k === key);
      if (at >= 0) this.#extra[at] = [key, value];
      else this.#extra.push([key, value]);
    }
  }

  /**
   * A text chunk as JSON: the template around its content, which is all that is serialised
   * (the same text as `JSON.stringify` of the chunk object; a stream is mostly such chunks).
   */
  #textChunk(text: string): string {
    const [before, after] = this.#template ??= this.#makeTemplate();
    return before + JSON.stringify(text) + after;
  }

  #makeTemplate(): [string, string] {
    const json = JSON.stringify(this.#deltaChunk({ content: TEMPLATE_MARK }));
    // The last one: only the gateway's own fields follow the content, never a caller's text.
    const at = json.lastIndexOf(TEMPLATE_MARK_JSON);
    return [json.slice(0, at), json.slice(at + TEMPLATE_MARK_JSON.length)];
  }

  /** A chunk of one choice's delta, with the log probabilities of its tokens when it has them. */
  #deltaChunk(delta: WireDelta, logprobs: ChunkChoice["logprobs"] = null): ChatChunk {
    return this.#chunk([{ index: 0, delta, logprobs, finish_reason: null }]);
  }

  #chunk(choices: ChunkChoice[]): ChatChunk {
    const chunk: ChatChunk = {
      id: this.#id,
      object: "chat.completion.chunk",
      created: this.#head.created,
      model: this.#head.model,
      choices,
    };
    if (this.#extra.length > 0) {
      // Upstream fields sit beside the gateway's own, before `choices` as OpenAI orders them.
      const withExtras: Record<string, unknown> = {
        id: chunk.id,
        object: chunk.object,
        created: chunk.created,
        model: chunk.model,
      };
      for (const [key, value] of this.#extra) if (!(key in withExtras)) withExtras[key] = value;
      withExtras.choices = choices;
      if (this.#head.includeUsage) withExtras.usage = null;
      return withExtras as unknown as ChatChunk;
    }
    if (this.#head.includeUsage) chunk.usage = null;
    return chunk;
  }
}

/** The first element of an extras `choices` array, or nothing. */
function firstChoice(choices: unknown): Record<string, unknown> {
  const first = Array.isArray(choices) ? choices[0] : undefined;
  return isObject(first) ? first : {};
}
