/**
 * OpenAI's Responses API passed through (providers with `responses_api: true`): the client's
 * body goes to the upstream's `/responses` as the front door hands it over (only `model`
 * rewritten there), and the answer comes back as JSON or as the accepted stream whose SSE
 * events the front door reads and forwards.
 */
import type { SseEvent } from "../../http/sse.ts";
import type { CallContext } from "../types.ts";
import { chatPost, type Upstream } from "../upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** A streamed passthrough answer: its SSE events read by network read, then let go. */
export interface ResponsesEvents {
  /** The events of the next read (possibly none), or `null` at the end. */
  readEvents(): Promise<SseEvent[] | null>;
  /** Aborts what is still running. */
  close(): void;
}

/** The upstream's answer to a passed-through Responses request. */
export type ResponsesAnswer =
  | { kind: "json"; body: Record<string, unknown> }
  | { kind: "stream"; events: ResponsesEvents };

/** `POST /responses` with `body` (whose `stream` says which answer comes back), its `model` the
 * upstream's id. */
export async function passResponses(
  upstream: Upstream,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<ResponsesAnswer> {
  const stream = body.stream === true;
  const request = chatPost(ctx, "/responses", { ...body, model: ctx.upstreamModel }, stream);
  if (stream) return { kind: "stream", events: await upstream.call(request) };
  const answer = await upstream.json(request);
  if (!isObject(answer)) throw malformed("response: expected a JSON object");
  return { kind: "json", body: answer };
}
