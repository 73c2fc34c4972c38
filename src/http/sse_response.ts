/**
 * A streamed answer as an SSE response (spec §4.2 rule 3, §6): the back end's canonical event
 * batches are pulled only when the client is ready for more, each batch rendered by the front
 * door's protocol and written in one piece; at the end the protocol's closing bytes (`data:
 * [DONE]`), or its error event when the back end fails mid-stream; the back end stopped when
 * the client goes away. The response carries a tally of what was streamed, so that settling
 * knows the tokens of a stream cut short whatever front door rendered it.
 */
import type { CanonicalEvent } from "../canonical/events.ts";
import type { Usage } from "../canonical/result.ts";
import { ApiError, upstreamError } from "../errors.ts";
import { isPolled, type PolledBatches } from "../canonical/polled_batches.ts";
import { SSE_HEADERS } from "./sse.ts";

/** Characters of text per token assumed when a stream's tokens must be estimated (the common
 * rule of thumb for English with the GPT and Claude tokenizers). */
const CHARS_PER_TOKEN = 4;

/** What a stream has produced so far: the characters of its content (text, reasoning, tool
 * arguments, refusals) and the last usage its back end reported. */
export class StreamTally {
  chars = 0;
  /** The last usage the stream reported (the settle step's). */
  usage: Usage | null = null;
  /** Whether the answer finished (a `finish` event came). */
  finished = false;

  /** Counts a batch of events. A usage of nothing (zeros: what a back end that reports no
   * usage gives at its end) is no report: the streamed text is counted instead. */
  add(events: readonly CanonicalEvent[]): void {
    for (const event of events) {
      if (event.type === "block_delta") {
        const delta = event.delta;
        if (delta.type === "arguments") this.chars += delta.json.length;
        else if (delta.type !== "signature") this.chars += delta.text.length;
      } else if (event.type === "usage" && (event.usage.input > 0 || event.usage.output > 0)) {
        this.usage = event.usage;
      } else if (event.type === "finish") {
        this.finished = true;
      }
    }
  }

  /** The output tokens of the content streamed so far, estimated from its length. */
  estimatedOutput(): number {
    return Math.ceil(this.chars / CHARS_PER_TOKEN);
  }
}

/** A streamed answer's response: the SSE body and the tally of what it streamed. */
export class EventStreamResponse extends Response {
  constructor(body: ReadableStream<Uint8Array>, readonly tally: StreamTally) {
    // Content-Type alone keeps Deno's fast path; the other two are cheaper set afterwards.
    super(body, { status: 200, headers: { "content-type": SSE_HEADERS["content-type"] } });
    this.headers.set("cache-control", SSE_HEADERS["cache-control"]);
    this.headers.set("x-accel-buffering", SSE_HEADERS["x-accel-buffering"]);
  }
}

/** How a stream ended, for settling the request. */
export interface StreamOutcome {
  status: number;
  error: string | null;
}

/** A front door's protocol for streams: canonical events in, SSE bytes out. */
export interface StreamRenderer {
  /** The bytes for one batch of events, or `null` when the batch makes none. */
  render(events: readonly CanonicalEvent[]): Uint8Array | null;
  /** The bytes that close a stream whose answer finished (a stream whose events ran out before
   * its `finish` event ends with {@link error} instead). */
  end(): Uint8Array;
  /** The error event for a failure after the stream began. */
  error(error: ApiError): Uint8Array;
}

/** Options for {@link eventStreamResponse}. */
export interface EventStreamOptions {
  /** Aborted here when the client stops reading (the body is cancelled). */
  abort: AbortController;
  /** The signal the back end got (this abort and the client's disconnect): once it has fired,
   * a failure of the back end is the client leaving, not an error. */
  signal: AbortSignal;
  /** Sees every batch before it is rendered (the content, for the log); the usage is the
   * tally's. */
  observe?: ((events: readonly CanonicalEvent[]) => void) | undefined;
  /** Called once the first bytes are ready: from then on the stream settles the request. */
  settleLater(): void;
  /** Called once, when the stream ends: delivered, failed mid-way or left by the client. */
  settle(outcome: StreamOutcome): void;
  /** Maps a failure that is not an {@link ApiError} (a bug) to what the client is told. */
  onUnexpected(error: unknown): ApiError;
}

/** Client-closed status used in the log (nginx's convention). */
const CLIENT_CLOSED = 499;

/**
 * Starts the stream: pulls batches until one renders to bytes, so that a failure before it
 * still throws (and becomes a JSON error with its status), then answers 200 with a body that
 * pulls the remaining batches as the client reads, each one piece of the body.
 */
export async function eventStreamResponse(
  batches: AsyncIterable<CanonicalEvent[]>,
  renderer: StreamRenderer,
  options: EventStreamOptions,
): Promise<Response> {
  const iterator = batches[Symbol.asyncIterator]();
  // Batches that can be polled are (canonical/polled_batches.ts).
  const polled = isPolled(batches) ? batches : null;
  /** The next batch if one is ready (`null` at the end), or `undefined` after a wait. */
  const step = async (): Promise<CanonicalEvent[] | null | undefined> => {
    if (polled === null) {
      const next = await iterator.next();
      return next.done ? null : next.value;
    }
    const batch = polled.poll();
    if (batch === undefined) await polled.more();
    return batch;
  };
  const { abort } = options;
  const tally = new StreamTally();
  const take = (events: readonly CanonicalEvent[]): Uint8Array | null => {
    tally.add(events);
    options.observe?.(events);
    return renderer.render(events);
  };
  let pending: Uint8Array | null = null;
  try {
    while (pending === null) {
      const batch = await step();
      if (batch === null) {
        throw upstreamError("The provider ended the stream without sending anything.");
      }
      if (batch !== undefined) pending = take(batch);
    }
  } catch (e) {
    iterator.return?.().catch(() => {});
    throw e;
  }
  options.settleLater();
  let closed = false;
  const end = (outcome: StreamOutcome) => {
    closed = true;
    options.settle(outcome);
  };

  /** Writes what `batch` renders (or, for `null`, the end); says whether it wrote. */
  const deliver = (
    controller: ReadableStreamDefaultController<Uint8Array>,
    batch: CanonicalEvent[] | null,
  ): boolean => {
    if (batch === null) {
      if (!tally.finished) {
        throw upstreamError("The provider ended the stream before it finished the answer.");
      }
      controller.enqueue(renderer.end());
      controller.close();
      end({ status: 200, error: null });
      return true;
    }
    const bytes = take(batch);
    if (bytes === null) return false;
    controller.enqueue(bytes);
    return true;
  };
  /** Ends the stream after a failure: the client left, or the protocol's error event. */
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, e: unknown): void => {
    if (closed) return;
    if (options.signal.aborted) {
      controller.close();
      end({ status: CLIENT_CLOSED, error: "client_disconnected" });
      return;
    }
    const error = e instanceof ApiError ? e : options.onUnexpected(e);
    controller.enqueue(renderer.error(error));
    controller.close();
    end({ status: error.status, error: error.code ?? error.type });
  };
  // Small async functions, one per kind of source: a paced stream resumes one of them for
  // every chunk, and an async frame costs what its locals do.
  const pullPolled = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
    batches: PolledBatches,
  ): Promise<void> => {
    try {
      for (;;) {
        const batch = batches.poll();
        if (batch !== undefined) {
          const first = tally.chars === 0;
          if (!deliver(controller, batch)) continue;
          // Batches already read go with it (the end of a burst among them): the server writes
          // what a read finds ready in one piece, and a later pull comes microtasks late. Not
          // after the first content, which goes without waiting for the rest of its burst.
          for (;;) {
            if ((first && tally.chars > 0) || closed) return;
            const ready = batches.poll();
            if (ready === undefined) return;
            deliver(controller, ready);
          }
        }
        await batches.more();
        if (closed) return;
      }
    } catch (e) {
      fail(controller, e);
    }
  };
  const pullIterated = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<void> => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (closed) return;
        if (deliver(controller, next.done ? null : next.value)) return;
      }
    } catch (e) {
      fail(controller, e);
    }
  };

  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pending !== null) {
        controller.enqueue(pending);
        pending = null;
        return;
      }
      return polled !== null ? pullPolled(controller, polled) : pullIterated(controller);
    },
    cancel() {
      if (closed) return;
      end({ status: CLIENT_CLOSED, error: "client_disconnected" });
      abort.abort(new DOMException("The client closed the connection.", "AbortError"));
      iterator.return?.().catch(() => {});
    },
  }, { highWaterMark: 0 });
  return new EventStreamResponse(body, tally);
}
