/**
 * The answer of a Messages call forwarded to an Anthropic upstream (see
 * `providers/anthropic/passthrough.ts`), as the client's response: the upstream's JSON, or its
 * SSE bytes pulled batch by batch as the client reads (the usage they report kept for the
 * log), the upstream call aborted when the client goes away, and a failure of the gateway's
 * own after the stream began (a broken connection, a deadline) as an `error` event.
 */
import { ApiError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import { sseResponse } from "../../http/sse.ts";
import type { StreamOutcome } from "../../http/sse_response.ts";
import type { ForwardedAnswer, ForwardedBatch } from "../../providers/types.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { sseEvent } from "./stream.ts";

/** Client-closed status used in the log (nginx's convention). */
const CLIENT_CLOSED = 499;
const OK: StreamOutcome = { status: 200, error: null };
const encoder = new TextEncoder();

/** The response for a forwarded answer; a stream's first batch is awaited first, so that an
 * upstream that fails before it is answered with an HTTP error. */
export async function forwardedResponse(
  ctx: RequestContext,
  answer: ForwardedAnswer,
  abort: AbortController,
  onUnexpected: (error: unknown) => ApiError,
): Promise<Response> {
  if (answer.kind === "json") {
    ctx.usage = answer.usage;
    return json(answer.body);
  }
  const iterator = answer.batches[Symbol.asyncIterator]();
  let first: IteratorResult<ForwardedBatch, unknown>;
  try {
    first = await iterator.next();
  } catch (e) {
    iterator.return?.().catch(() => {});
    throw e;
  }
  let pending: ForwardedBatch | null = first.done ? null : first.value;
  ctx.stream = true;
  ctx.settleLater();
  let closed = first.done === true;
  /** The upstream's error event, passed on as it came; the log shows it, not a 200. */
  let failure: ApiError | null = null;
  const end = (outcome: StreamOutcome) => {
    closed = true;
    ctx.settle(outcome.status, outcome.error);
  };
  const finished = () =>
    end(failure ? { status: failure.status, error: failure.code ?? failure.type } : OK);
  if (closed) finished();
  const take = (batch: ForwardedBatch): Uint8Array => {
    if (batch.usage !== null) ctx.usage = batch.usage;
    if (batch.failure) failure = batch.failure;
    return batch.bytes;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== null) {
        controller.enqueue(take(pending));
        pending = null;
        if (closed) controller.close();
        return;
      }
      if (closed) return controller.close();
      try {
        const next = await iterator.next();
        if (closed) return;
        if (next.done) {
          controller.close();
          finished();
          return;
        }
        controller.enqueue(take(next.value));
      } catch (e) {
        if (closed) return;
        if (abort.signal.aborted || ctx.signal.aborted) {
          controller.close();
          end({ status: CLIENT_CLOSED, error: "client_disconnected" });
          return;
        }
        const error = e instanceof ApiError ? e : onUnexpected(e);
        const { type, error: detail } = error.toAnthropicBody();
        controller.enqueue(encoder.encode(sseEvent({ type, error: detail })));
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
