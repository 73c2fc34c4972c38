/**
 * Canonical stream events as the Responses API's SSE events (`event: <type>` and its JSON,
 * `sequence_number` counting from 0, no `[DONE]`): `response.created` and
 * `response.in_progress` with the first content; for each output item `output_item.added`,
 * its content (`content_part.added`, `output_text.delta`/`.done`, `refusal.delta`/`.done`,
 * `content_part.done`; `reasoning_summary_part.added`, `reasoning_summary_text.delta`/`.done`,
 * `reasoning_summary_part.done`; `function_call_arguments.delta`/`.done`, or for a custom tool's
 * call `custom_tool_call_input.delta`/`.done` with the whole input once it is known) and
 * `output_item.done`; then `response.completed` or `response.incomplete` with the whole
 * Response, or `response.failed` with its error when the back end fails mid-stream. The last
 * item's `output_item.done` (a message or a function call) waits for the next item or the end,
 * so that an item cut short by the end says `incomplete` as the final Response does. Item ids
 * are those of the non-streamed rendering (output.ts), so the final Response matches the
 * events.
 */
import type { BlockDelta, BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import type { ReasoningPart } from "../../canonical/conversation.ts";
import type { ApiError } from "../../errors.ts";
import type { StreamRenderer } from "../../http/sse_response.ts";
import type { ResultCollector } from "../../canonical/result_collector.ts";
import {
  callPrefix,
  endingOf,
  itemId,
  outputText,
  reasoningItem,
  refusalPart,
  renderOutput,
  renderResponse,
  type ResponseHead,
  toolCallItem,
  type WireObject,
} from "./output.ts";
import { customInput, type WireTool } from "./tool_map.ts";

const encoder = new TextEncoder();

/** One SSE event of the Responses API. */
export function encodeResponseEvent(event: WireObject): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The block being streamed at a canonical block index. */
interface OpenBlock {
  kind: BlockKind["type"];
  outputIndex: number;
  itemId: string;
  /** Its content part's index in the message (text and refusal). */
  contentIndex: number;
  text: string;
  /** The called tool, as declared. */
  tool?: WireTool;
  callId: string;
  reasoning?: ReasoningPart;
}

/** The assistant message item being streamed. */
interface OpenMessage {
  outputIndex: number;
  itemId: string;
  content: WireObject[];
}

/** A function call whose arguments are done: its `output_item.done` waits for what follows. */
interface DoneCall {
  outputIndex: number;
  itemId: string;
  callId: string;
  tool: WireTool;
  arguments: string;
}

/** Renders one stream as Responses events (see the module doc). */
export class ResponsesStreamRenderer implements StreamRenderer {
  readonly #head: ResponseHead;
  readonly #includeEncrypted: boolean;
  readonly #collector: ResultCollector;
  readonly #now: () => number;
  #sequence = 0;
  #started = false;
  #finished = false;
  #items = 0;
  #message: OpenMessage | null = null;
  #call: DoneCall | null = null;
  readonly #blocks = new Map<number, OpenBlock>();

  /** `collector` holds the stream's parts (added before each batch is rendered). */
  constructor(
    head: ResponseHead,
    includeEncrypted: boolean,
    collector: ResultCollector,
    now: () => number,
  ) {
    this.#head = head;
    this.#includeEncrypted = includeEncrypted;
    this.#collector = collector;
    this.#now = now;
  }

  render(events: readonly CanonicalEvent[]): Uint8Array | null {
    let out = "";
    const emit = (event: WireObject) => {
      out += encodeResponseEvent({ type: event.type, ...event, sequence_number: this.#sequence++ });
    };
    for (const event of events) {
      if (this.#finished) break;
      if (event.type === "block_start" || event.type === "finish") this.#start(emit);
      switch (event.type) {
        case "block_start":
          this.#open(event.index, event.block, emit);
          break;
        case "block_delta":
          this.#delta(event.index, event.delta, emit);
          break;
        case "block_stop":
          this.#stop(event.index, emit);
          break;
        case "finish":
          this.#finish(emit);
          break;
      }
    }
    return out === "" ? null : encoder.encode(out);
  }

  end(): Uint8Array {
    return new Uint8Array();
  }

  error(error: ApiError): Uint8Array {
    let out = "";
    const emit = (event: WireObject) => {
      out += encodeResponseEvent({ ...event, sequence_number: this.#sequence++ });
    };
    this.#start(emit);
    const code = error.status === 429 ? "rate_limit_exceeded" : "server_error";
    emit({
      type: "response.failed",
      response: renderResponse(
        this.#head,
        {
          status: "failed",
          error: { code, message: error.message },
        },
        [],
        this.#collector.usage,
      ),
    });
    return encoder.encode(out);
  }

  #start(emit: (event: WireObject) => void): void {
    if (this.#started) return;
    this.#started = true;
    const response = renderResponse(this.#head, { status: "in_progress" }, [], null);
    emit({ type: "response.created", response });
    emit({ type: "response.in_progress", response });
  }

  #open(index: number, block: BlockKind, emit: (event: WireObject) => void): void {
    this.#closeCall(emit);
    const open: OpenBlock = {
      kind: block.type,
      outputIndex: 0,
      itemId: "",
      contentIndex: 0,
      text: "",
      callId: "",
    };
    if (block.type === "text" || block.type === "refusal") {
      const message = this.#openMessage(emit);
      open.outputIndex = message.outputIndex;
      open.itemId = message.itemId;
      open.contentIndex = message.content.length;
      const part = block.type === "text" ? outputText("") : refusalPart("");
      message.content.push(part);
      emit({
        type: "response.content_part.added",
        item_id: open.itemId,
        output_index: open.outputIndex,
        content_index: open.contentIndex,
        part,
      });
      this.#blocks.set(index, open);
      return;
    }
    this.#closeMessage(emit);
    open.outputIndex = this.#items++;
    if (block.type === "reasoning") {
      open.itemId = itemId("rs", this.#head.id, open.outputIndex);
      open.reasoning = { type: "reasoning", text: "" };
      if (block.redacted !== undefined) open.reasoning.redacted = block.redacted;
      if (block.style !== undefined) open.reasoning.style = block.style;
      emit({
        type: "response.output_item.added",
        output_index: open.outputIndex,
        item: { id: open.itemId, type: "reasoning", summary: [] },
      });
    } else {
      const tool = this.#head.tools.wire(block.name);
      open.itemId = itemId(callPrefix(tool), this.#head.id, open.outputIndex);
      open.tool = tool;
      open.callId = block.id;
      emit({
        type: "response.output_item.added",
        output_index: open.outputIndex,
        item: toolCallItem(open.itemId, block.id, tool, "", "in_progress"),
      });
    }
    this.#blocks.set(index, open);
  }

  #delta(index: number, delta: BlockDelta, emit: (event: WireObject) => void): void {
    const open = this.#blocks.get(index);
    if (open === undefined) return;
    const at = { item_id: open.itemId, output_index: open.outputIndex };
    switch (delta.type) {
      case "text":
      case "refusal":
        if (delta.text === "") return;
        open.text += delta.text;
        emit({
          type: open.kind === "refusal" ? "response.refusal.delta" : "response.output_text.delta",
          ...at,
          content_index: open.contentIndex,
          delta: delta.text,
          ...(open.kind === "refusal" ? {} : { logprobs: [] }),
        });
        return;
      case "reasoning":
        if (delta.text === "") return;
        if (open.text === "") {
          emit({
            type: "response.reasoning_summary_part.added",
            ...at,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          });
        }
        open.text += delta.text;
        open.reasoning!.text = open.text;
        emit({
          type: "response.reasoning_summary_text.delta",
          ...at,
          summary_index: 0,
          delta: delta.text,
        });
        return;
      case "signature":
        open.reasoning!.signature = (open.reasoning!.signature ?? "") + delta.signature;
        return;
      case "arguments":
        if (delta.json === "") return;
        open.text += delta.json;
        // A custom tool's input is a JSON string in the arguments: told whole at the end.
        if (open.tool?.kind === "custom") return;
        emit({ type: "response.function_call_arguments.delta", ...at, delta: delta.json });
        return;
    }
  }

  #stop(index: number, emit: (event: WireObject) => void): void {
    const open = this.#blocks.get(index);
    if (open === undefined) return;
    this.#blocks.delete(index);
    const at = { item_id: open.itemId, output_index: open.outputIndex };
    switch (open.kind) {
      case "text":
      case "refusal": {
        const refusal = open.kind === "refusal";
        const part = refusal ? refusalPart(open.text) : outputText(open.text);
        this.#message!.content[open.contentIndex] = part;
        emit(
          refusal
            ? {
              type: "response.refusal.done",
              ...at,
              content_index: open.contentIndex,
              refusal: open.text,
            }
            : {
              type: "response.output_text.done",
              ...at,
              content_index: open.contentIndex,
              text: open.text,
              logprobs: [],
            },
        );
        emit({
          type: "response.content_part.done",
          ...at,
          content_index: open.contentIndex,
          part,
        });
        return;
      }
      case "reasoning": {
        if (open.text !== "") {
          emit({
            type: "response.reasoning_summary_text.done",
            ...at,
            summary_index: 0,
            text: open.text,
          });
          emit({
            type: "response.reasoning_summary_part.done",
            ...at,
            summary_index: 0,
            part: { type: "summary_text", text: open.text },
          });
        }
        emit({
          type: "response.output_item.done",
          output_index: open.outputIndex,
          item: reasoningItem(open.itemId, open.reasoning!, this.#includeEncrypted),
        });
        return;
      }
      case "tool_call": {
        const tool = open.tool!;
        if (tool.kind === "custom") {
          const input = customInput(open.text);
          if (input !== "") {
            emit({ type: "response.custom_tool_call_input.delta", ...at, delta: input });
          }
          emit({ type: "response.custom_tool_call_input.done", ...at, input });
        } else {
          emit({
            type: "response.function_call_arguments.done",
            ...at,
            name: tool.name,
            arguments: open.text,
          });
        }
        this.#closeCall(emit);
        this.#call = {
          outputIndex: open.outputIndex,
          itemId: open.itemId,
          callId: open.callId,
          tool,
          arguments: open.text,
        };
        return;
      }
    }
  }

  #openMessage(emit: (event: WireObject) => void): OpenMessage {
    if (this.#message !== null) return this.#message;
    const outputIndex = this.#items++;
    const message: OpenMessage = {
      outputIndex,
      itemId: itemId("msg", this.#head.id, outputIndex),
      content: [],
    };
    this.#message = message;
    emit({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: {
        id: message.itemId,
        type: "message",
        status: "in_progress",
        role: "assistant",
        content: [],
      },
    });
    return message;
  }

  #closeMessage(emit: (event: WireObject) => void, status = "completed"): void {
    const message = this.#message;
    if (message === null) return;
    this.#message = null;
    emit({
      type: "response.output_item.done",
      output_index: message.outputIndex,
      item: {
        id: message.itemId,
        type: "message",
        status,
        role: "assistant",
        content: message.content,
      },
    });
  }

  /** Emits the `output_item.done` of the function call waiting for it. */
  #closeCall(
    emit: (event: WireObject) => void,
    status: "completed" | "incomplete" = "completed",
  ): void {
    const call = this.#call;
    if (call === null) return;
    this.#call = null;
    emit({
      type: "response.output_item.done",
      output_index: call.outputIndex,
      item: toolCallItem(call.itemId, call.callId, call.tool, call.arguments, status),
    });
  }

  #finish(emit: (event: WireObject) => void): void {
    this.#finished = true;
    const { parts, finish, usage } = this.#collector;
    const ending = endingOf(finish ?? "stop", parts);
    const status = ending.status === "incomplete" ? "incomplete" : "completed";
    this.#closeMessage(emit, status);
    this.#closeCall(emit, status);
    ending.completedAt = Math.floor(this.#now() / 1000);
    const output = renderOutput(
      parts,
      this.#head.id,
      this.#head.tools,
      this.#includeEncrypted,
      ending.status === "incomplete",
    );
    const response = renderResponse(this.#head, ending, output, usage);
    emit({
      type: ending.status === "incomplete"
        ? "response.incomplete"
        : ending.status === "failed"
        ? "response.failed"
        : "response.completed",
      response,
    });
  }
}
