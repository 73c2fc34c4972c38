/**
 * Canonical stream events as Gemini's `streamGenerateContent` answer: one
 * `GenerateContentResponse` chunk per batch that adds something, each with the candidate's new
 * parts (text and thought pieces as they come, merged within a batch; a function call whole
 * once its arguments are complete; a Gemini signature on the part it came with, or a part of
 * its own `{"text": "", "thoughtSignature"}` after it), `modelVersion`, `responseId` and
 * `usageMetadata` (the prompt's tokens: the back end's count once reported, else the
 * gateway's), the last chunk with `finishReason` and the whole usage. Framed as Gemini frames them: with `?alt=sse`, `data: {json}`
 * events separated by CRLF blank lines and no end marker; without it, one JSON array
 * (`[{...}` then `,\r\n{...}` for each chunk, `]` at the end). A failure after the stream
 * began is a chunk `{"error": {code, message, status}}`.
 */
import type { BlockDelta, BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import type { FinishReason, Usage } from "../../canonical/result.ts";
import type { ApiError } from "../../errors.ts";
import type { StreamRenderer } from "../../http/sse_response.ts";
import type {
  GeminiCandidate,
  GeminiContent,
  GeminiPart,
  GenerateContentResponse,
} from "../../types/gemini.ts";
import { GEMINI_STYLE } from "./contents.ts";
import { toFinishReason } from "./finish.ts";
import { functionCallPart } from "./parts.ts";
import type { GeminiHead } from "./response.ts";
import { responseId } from "./response.ts";
import { toUsageMetadata } from "./usage.ts";

/** How a stream is framed: SSE (`?alt=sse`) or one JSON array. */
export type GeminiFraming = "sse" | "json_array";

/** What a stream's chunks share. */
export interface GeminiStreamHead extends GeminiHead {
  framing: GeminiFraming;
  /** The gateway's count of the prompt's tokens, for the last chunk when the back end
   * reported no usage. */
  estimate: number;
}

/** One block on its way out. */
interface Block {
  kind: BlockKind;
  /** A tool call's arguments so far. */
  json: string;
  done: boolean;
}

const encoder = new TextEncoder();

/** Renders one stream's event batches as Gemini chunks (see the module doc). */
export class GeminiStreamRenderer implements StreamRenderer {
  readonly #head: GeminiStreamHead;
  #id: string;
  #chunks = 0;
  /** Whether the JSON array's `[` went out. */
  #opened = false;
  #usage: Usage | null = null;
  readonly #blocks = new Map<number, Block>();
  #finished = false;

  constructor(head: GeminiStreamHead) {
    this.#head = head;
    this.#id = head.requestId;
  }

  render(events: readonly CanonicalEvent[]): Uint8Array | null {
    const parts: GeminiPart[] = [];
    let finish: FinishReason | null = null;
    let detail: string | undefined;
    for (const event of events) {
      switch (event.type) {
        case "start":
          this.#id = responseId(event.id, this.#head.requestId);
          break;
        case "block_start":
          this.#blocks.set(event.index, { kind: event.block, json: "", done: false });
          break;
        case "block_delta":
          this.#delta(event.index, event.delta, parts);
          break;
        case "block_stop":
          this.#stop(event.index, parts);
          break;
        case "usage":
          this.#usage = event.usage;
          break;
        case "finish":
          if (this.#finished) break;
          this.#finished = true;
          for (const index of this.#blocks.keys()) this.#stop(index, parts);
          finish = event.reason;
          detail = event.detail;
      }
    }
    let out = this.#open();
    if (parts.length > 0 || finish !== null) out += this.#frame(this.#chunk(parts, finish, detail));
    return out === "" ? null : encoder.encode(out);
  }

  end(): Uint8Array {
    return encoder.encode(this.#head.framing === "json_array" ? "]" : "");
  }

  error(error: ApiError): Uint8Array {
    const tail = this.#head.framing === "json_array" ? "]" : "";
    return encoder.encode(this.#open() + this.#frame(error.toGeminiBody()) + tail);
  }

  /** The JSON array's `[`, the first time. */
  #open(): string {
    if (this.#opened || this.#head.framing !== "json_array") return "";
    this.#opened = true;
    return "[";
  }

  /** The text of one chunk in the stream's framing. */
  #frame(chunk: unknown): string {
    const json = JSON.stringify(chunk);
    const first = this.#chunks++ === 0;
    if (this.#head.framing === "sse") return `data: ${json}\r\n\r\n`;
    return first ? json : `,\r\n${json}`;
  }

  #chunk(
    parts: GeminiPart[],
    finish: FinishReason | null,
    detail: string | undefined,
  ): GenerateContentResponse {
    const head = this.#head;
    const content: GeminiContent = {
      role: "model",
      parts: parts.length > 0 ? parts : [{ text: "" }],
    };
    const candidate: GeminiCandidate = finish !== null
      ? { content, finishReason: toFinishReason(finish, detail), index: 0 }
      : { content, index: 0 };
    const usage = this.#usage ?? { input: head.estimate, output: 0 };
    // As Gemini writes them: the prompt's count while the answer streams, all of it at the end.
    const usageMetadata = finish !== null
      ? toUsageMetadata(usage)
      : { promptTokenCount: usage.input, totalTokenCount: usage.input };
    return {
      candidates: [candidate],
      usageMetadata,
      modelVersion: head.model,
      responseId: this.#id,
    };
  }

  #delta(index: number, delta: BlockDelta, parts: GeminiPart[]): void {
    const block = this.#blocks.get(index);
    if (block === undefined || block.done) return;
    switch (delta.type) {
      case "text":
      case "refusal":
        if (delta.text !== "") {
          appendText(parts, delta.text, false);
        }
        return;
      case "reasoning":
        if (delta.text !== "" && this.#head.includeThoughts) {
          appendText(parts, delta.text, true);
        }
        return;
      case "signature": {
        if (block.kind.type !== "reasoning" || block.kind.style !== GEMINI_STYLE) return;
        const last = parts.at(-1);
        if (last !== undefined && last.thoughtSignature === undefined) {
          last.thoughtSignature = delta.signature;
        } else parts.push({ text: "", thoughtSignature: delta.signature });
        return;
      }
      case "arguments":
        block.json += delta.json;
    }
  }

  #stop(index: number, parts: GeminiPart[]): void {
    const block = this.#blocks.get(index);
    if (block === undefined || block.done) return;
    block.done = true;
    if (block.kind.type === "tool_call") {
      parts.push(functionCallPart(block.kind.id, block.kind.name, block.json));
    }
  }
}

/** Appends a text or thought piece, merged into the last part when that is of its kind. */
function appendText(parts: GeminiPart[], text: string, thought: boolean): void {
  const last = parts.at(-1);
  if (
    last !== undefined && last.text !== undefined && (last.thought === true) === thought &&
    last.thoughtSignature === undefined
  ) {
    last.text += text;
    return;
  }
  parts.push(thought ? { text, thought: true } : { text });
}
