/**
 * A passed-through stream as the client's response (DESIGN §6.2's same-protocol path): the
 * upstream's SSE bytes pulled batch by batch as the client reads (the usage they report kept
 * for the log), the first batch awaited before answering (so that an upstream failing before it
 * is answered with an HTTP error), the upstream call aborted when the client goes away, and a
 * failure of the gateway's own after the stream began (a broken connection, a deadline) as the
 * door's error event.
 */
import { ApiError } from "../../errors.ts";
import { sseResponse } from "../../http/sse.ts";
import type { StreamOutcome } from "../../http/sse_response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { PassedBatch } from "../../providers/types.ts";

/** Client-closed status used in the log (nginx's convention). */
const CLIENT_CLOSED = 499;
const OK: StreamOutcome = { status: 200, error: null };
const encoder = new TextEncoder();

/** What the door adds to a passed-through stream. */
export interface PassedStreamOptions {
  /** Aborted when the client stops reading (the call's signal follows it). */
  abort: AbortController;
  /** Runs before the batch that ends the answer with its whole response is handed on (the
   * Responses door stores it). */
  finished?(final: Record<string, unknown>): Promise<void>;
  /** The door's error event for a failure after the stream began; `sequence` is the next
   * event's number, for a protocol that numbers them. */
  errorEvent(error: ApiError, sequence: number): string;
  /** Maps a failure that is not an {@link ApiError} (a bug) to what the client is told. */
  onUnexpected(error: unknown): ApiError;
}

/** The response for a passed-through stream's batches; settles the request when it ends. */
export async function passedStream(
  ctx: RequestContext,
  batches: AsyncIterable<PassedBatch>,
  options: PassedStreamOptions,
): Promise<Response> {
  const { abort } = options;
  const iterator = batches[Symbol.asyncIterator]();
  let first: IteratorResult<PassedBatch, unknown>;
  try {
    first = await iterator.next();
  } catch (e) {
    iterator.return?.().catch(() => {});
    throw e;
  }
  let pending: PassedBatch | null = first.done ? null : first.value;
  ctx.stream = true;
  ctx.settleLater();
  let closed = first.done === true;
  let sequence = 0;
  /** The upstream's error event, passed on as it came; the log shows it, not a 200. */
  let failure: ApiError | null = null;
  const end = (outcome: StreamOutcome) => {
    closed = true;
    ctx.settle(outcome.status, outcome.error);
  };
  const finished = () =>
    end(failure ? { status: failure.status, error: failure.code ?? failure.type } : OK);
  if (closed) finished();
  /** Takes what a batch reports; its bytes. */
  const take = (batch: PassedBatch): Uint8Array => {
    if (batch.usage !== null) ctx.usage = batch.usage;
    if (batch.failure) failure = batch.failure;
    if (batch.sequence !== undefined) sequence = batch.sequence;
    return batch.bytes;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Only a batch that ends the answer with its whole response waits before it is handed
        // on: the others are enqueued at once, so that the server sees the first one ready and
        // writes it with the head (one write to the client fewer a stream).
        if (pending !== null) {
          const batch = pending;
          pending = null;
          if (batch.final && options.finished) await options.finished(batch.final);
          controller.enqueue(take(batch));
          if (closed) controller.close();
          return;
        }
        if (closed) return controller.close();
        const next = await iterator.next();
        if (closed) return;
        if (next.done) {
          controller.close();
          finished();
          return;
        }
        const batch = next.value;
        if (batch.final && options.finished) await options.finished(batch.final);
        controller.enqueue(take(batch));
      } catch (e) {
        if (closed) return;
        if (abort.signal.aborted || ctx.signal.aborted) {
          controller.close();
          end({ status: CLIENT_CLOSED, error: "client_disconnected" });
          return;
        }
        const error = e instanceof ApiError ? e : options.onUnexpected(e);
        controller.enqueue(encoder.encode(options.errorEvent(error, sequence)));
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
