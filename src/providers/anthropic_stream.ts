import type { ChatChunk, Delta } from "../types/openai.ts";
import { completionIdOf, finishReasonOf, usageFromAnthropic } from "./anthropic_response.ts";
import { ChunkWriter } from "./chunks.ts";
import { isObject, type JsonObject, malformed, stringField } from "./wire.ts";

interface ToolBlock {
  /** The OpenAI tool-call index: its own counter, not the content-block index. */
  index: number;
  sentArguments: boolean;
}

/**
 * Translates the events of a streamed Anthropic message into public chat chunks: the role
 * with the first output (`content: ""`, or `content: null` and the first tool call's header
 * when a tool call comes first, as OpenAI streams it), text deltas as content, each `tool_use` block as a tool call with
 * its own index (0, 1, … whatever blocks come before it) and its `input_json_delta`s as
 * argument fragments (`{}` when none came), and with `message_stop` the finish chunk and the
 * usage chunk (input tokens from `message_start`, output from the cumulative `message_delta`).
 * `error` events are the caller's to handle; unknown events and block types are skipped.
 */
export class AnthropicStreamTranslator {
  readonly #model: string;
  readonly #now: number;
  #writer: ChunkWriter | null = null;
  readonly #tools = new Map<number, ToolBlock>();
  #usage: JsonObject = {};
  #stopReason: unknown = null;
  #roleSent = false;
  #done = false;

  constructor(model: string, now: number) {
    this.#model = model;
    this.#now = now;
  }

  /** Whether `message_stop` has been seen. */
  get done(): boolean {
    return this.#done;
  }

  /** The chunks for one event (possibly none). */
  push(data: JsonObject): ChatChunk[] {
    if (data.type === "ping") return [];
    if (data.type === "message_start") return this.#start(data);
    const writer = this.#writer;
    if (writer === null) throw malformed("stream (an event before message_start)");
    switch (data.type) {
      case "content_block_start": {
        const block = data.content_block;
        if (!isObject(block)) throw malformed("stream (content_block_start without a block)");
        if (block.type === "text") {
          const text = stringField(block, "text");
          return text ? this.#emit({ content: text }) : [];
        }
        if (block.type !== "tool_use") return [];
        const id = stringField(block, "id");
        const name = stringField(block, "name");
        if (id === null || name === null) throw malformed("stream (a tool_use block without id)");
        const tool: ToolBlock = { index: this.#tools.size, sentArguments: false };
        this.#tools.set(blockIndex(data), tool);
        const out = this.#emit({
          tool_calls: [{
            index: tool.index,
            id,
            type: "function",
            function: { name, arguments: "" },
          }],
        });
        if (isObject(block.input) && Object.keys(block.input).length > 0) {
          out.push(this.#arguments(tool, JSON.stringify(block.input)));
        }
        return out;
      }
      case "content_block_delta": {
        const delta = data.delta;
        if (!isObject(delta)) throw malformed("stream (content_block_delta without a delta)");
        if (delta.type === "text_delta") {
          const text = stringField(delta, "text");
          return text ? this.#emit({ content: text }) : [];
        }
        if (delta.type !== "input_json_delta") return [];
        const tool = this.#tools.get(blockIndex(data));
        if (!tool) throw malformed("stream (input_json_delta outside a tool_use block)");
        const json = stringField(delta, "partial_json");
        return json ? [this.#arguments(tool, json)] : [];
      }
      case "content_block_stop": {
        const tool = this.#tools.get(blockIndex(data));
        return tool && !tool.sentArguments ? [this.#arguments(tool, "{}")] : [];
      }
      case "message_delta": {
        if (isObject(data.delta) && data.delta.stop_reason !== undefined) {
          this.#stopReason = data.delta.stop_reason;
        }
        if (isObject(data.usage)) this.#usage = { ...this.#usage, ...numbers(data.usage) };
        return [];
      }
      case "message_stop":
        this.#done = true;
        return [
          ...this.#emit(null),
          writer.finish(finishReasonOf(this.#stopReason)),
          writer.usage(usageFromAnthropic(this.#usage)),
        ];
      default:
        return [];
    }
  }

  #start(data: JsonObject): ChatChunk[] {
    const message = data.message;
    const id = isObject(message) ? stringField(message, "id") : null;
    if (!isObject(message) || id === null) throw malformed("stream (message_start without id)");
    if (this.#writer !== null) throw malformed("stream (a second message_start)");
    this.#writer = new ChunkWriter(completionIdOf(id), Math.floor(this.#now / 1000), this.#model);
    if (isObject(message.usage)) this.#usage = numbers(message.usage);
    return [];
  }

  /** The chunks for a delta (none for `null`), led by the role chunk if not yet sent. */
  #emit(delta: Delta | null): ChatChunk[] {
    const writer = this.#writer!;
    const out: ChatChunk[] = [];
    if (!this.#roleSent) {
      this.#roleSent = true;
      if (delta?.tool_calls) return [writer.delta({ role: "assistant", content: null, ...delta })];
      out.push(writer.delta({ role: "assistant", content: "" }));
    }
    if (delta) out.push(writer.delta(delta));
    return out;
  }

  #arguments(tool: ToolBlock, fragment: string): ChatChunk {
    tool.sentArguments = true;
    return this.#writer!.delta({
      tool_calls: [{ index: tool.index, function: { arguments: fragment } }],
    });
  }
}

function blockIndex(data: JsonObject): number {
  if (typeof data.index !== "number") throw malformed(`stream (${data.type} without an index)`);
  return data.index;
}

function numbers(obj: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => typeof v === "number"));
}
