/**
 * A chat completion stream as an SSE response (spec §4.2 rule 3, §6): each chunk pulled from
 * the provider only when the client is ready for it, `data: [DONE]` at the end, an error event
 * (and no `[DONE]`) when the provider fails mid-stream, and the provider stopped when the
 * client goes away.
 */
import { ApiError, upstreamError } from "../errors.ts";
import type { ChatChunk, Usage } from "../types/openai.ts";
import { doneEvent, encodeEvent, encodeEvents, sseResponse } from "./sse.ts";

/** How a stream ended, for the request log. */
export interface StreamOutcome {
  status: number;
  error: string | null;
}

/** Options for {@link chatStreamResponse}. */
export interface ChatStreamOptions {
  /** Forward the provider's final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Aborted here when the client stops reading (the body is cancelled). */
  abort: AbortController;
  /** The signal the provider got (this abort and the client's disconnect): once it has fired,
   * a failure of the provider is the client leaving, not an error. */
  signal: AbortSignal;
  /** Given the usage of the final usage chunk, whether or not it is forwarded. */
  onUsage?(usage: Usage): void;
  /** Sees (and may adjust) every chunk before it is sent. */
  onChunk?(chunk: ChatChunk): void;
  /** Keeps the log record open; called once the first chunk has arrived. */
  deferLog(): (outcome: StreamOutcome) => void;
  /** Maps a failure that is not an {@link ApiError} (a bug) to what the client is told. */
  onUnexpected(error: unknown): ApiError;
}

/** Client-closed status used in the log (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * Starts the stream: waits for the first chunk, so that a failure before it still throws
 * (and becomes a JSON error with its status), then answers 200 with a body that pulls the
 * remaining chunks as the client reads. The source yields chunks one by one or in groups
 * (see `Provider.chatStreamBatches`); a group is written in one piece.
 */
export async function chatStreamResponse(
  chunks: AsyncIterable<ChatChunk | readonly ChatChunk[]>,
  options: ChatStreamOptions,
): Promise<Response> {
  const iterator = chunks[Symbol.asyncIterator]();
  const { includeUsage, abort } = options;
  let pending: Uint8Array | null = null;
  while (pending === null) {
    const first = await iterator.next();
    if (first.done) throw upstreamError("The provider ended the stream without sending anything.");
    pending = encodeSent(first.value);
  }
  const finish = options.deferLog();
  let closed = false;
  const end = (outcome: StreamOutcome) => {
    closed = true;
    finish(outcome);
  };

  /** Whether a chunk is sent; records usage from the final usage chunk. */
  function take(chunk: ChatChunk): boolean {
    if (chunk.choices.length === 0) {
      if (chunk.usage) options.onUsage?.(chunk.usage);
      if (!includeUsage) return false;
    } else if (includeUsage && chunk.usage === undefined) {
      chunk.usage = null;
    }
    options.onChunk?.(chunk);
    return true;
  }

  /** The events for the chunks of `value` that are sent, or `null` when none is. */
  function encodeSent(value: ChatChunk | readonly ChatChunk[]): Uint8Array | null {
    if (!isBatch(value)) return take(value) ? encodeEvent(value) : null;
    const sent: ChatChunk[] = [];
    for (const chunk of value) if (take(chunk)) sent.push(chunk);
    return sent.length > 0 ? encodeEvents(sent) : null;
  }

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== null) {
        controller.enqueue(pending);
        pending = null;
        return;
      }
      try {
        for (;;) {
          const next = await iterator.next();
          if (closed) return;
          if (next.done) {
            controller.enqueue(doneEvent());
            controller.close();
            end({ status: 200, error: null });
            return;
          }
          const bytes = encodeSent(next.value);
          if (bytes !== null) {
            controller.enqueue(bytes);
            return;
          }
        }
      } catch (e) {
        if (closed) return;
        if (options.signal.aborted) {
          controller.close();
          end({ status: CLIENT_CLOSED, error: "client_disconnected" });
          return;
        }
        const error = e instanceof ApiError ? e : options.onUnexpected(e);
        controller.enqueue(encodeEvent(error.toBody()));
        controller.close();
        end({ status: error.status, error: error.code ?? error.type });
      }
    },
    cancel() {
      if (closed) return;
      end({ status: CLIENT_CLOSED, error: "client_disconnected" });
      abort.abort(new DOMException("The client closed the connection.", "AbortError"));
      iterator.return?.().catch(() => {});
    },
  }, { highWaterMark: 0 });
  return sseResponse(body);
}

function isBatch(value: ChatChunk | readonly ChatChunk[]): value is readonly ChatChunk[] {
  return Array.isArray(value);
}
