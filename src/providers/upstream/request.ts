/** What a provider asks of its upstream: one call's method, path, body and signal. */
import type { CallContext } from "../types.ts";

/** One call to an upstream. */
export interface UpstreamRequest {
  method: "GET" | "POST";
  /** Appended to the provider's `base_url`, e.g. `/chat/completions`. */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is instead of {@link body}, its parts one after the other (JSON the client
   * wrote, passed on). */
  rawBody?: readonly Uint8Array[];
  /** The client's signal: when it fires, the upstream call is aborted. */
  signal: AbortSignal;
  requestId: string;
  /** A streamed body: after the headers, the deadline runs only while a read waits for the
   * upstream, from the start each time. */
  stream?: boolean;
  /** Model ids for rewriting the upstream's error messages (upstream -> gateway id). */
  model?: { id: string; upstream: string };
}

/** The `POST` of a model call (chat, moderation, images): the caller's signal and request id,
 * and the model ids. */
export function chatPost(
  ctx: CallContext,
  path: string,
  body: unknown,
  stream: boolean,
): UpstreamRequest {
  return {
    method: "POST",
    path,
    body,
    signal: ctx.signal,
    requestId: ctx.requestId,
    stream,
    model: { id: ctx.model.id, upstream: ctx.upstreamModel },
  };
}
