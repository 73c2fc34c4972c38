/**
 * OpenAI's Responses API passed through (providers with `responses_api: true`): the client's
 * body goes to the upstream's `/responses` with only `model` rewritten, and the answer comes
 * back as JSON or as its SSE events one for one, each Response object in them carrying the
 * client's fields (`model`, `previous_response_id`), with the usage and the final Response read
 * on the way.
 */
import type { Usage } from "../../canonical/result.ts";
import { upstreamError } from "../../errors.ts";
import type { SseEvent } from "../../http/sse.ts";
import { type EventReading, type PassedEvent, PassedEvents } from "../passed_events.ts";
import type { CallContext, PassthroughAnswer, PassthroughCall } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** The events that end a Responses stream with the whole response. */
const FINAL_EVENTS: ReadonlySet<string> = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
]);

/** `POST /responses` with the call's body (whose `stream` says which answer comes back), its
 * `model` the upstream's id. */
export async function passResponses(
  upstream: Upstream,
  call: PassthroughCall,
  ctx: CallContext,
): Promise<PassthroughAnswer> {
  const body: Record<string, unknown> = { ...call.body, model: ctx.upstreamModel };
  const stream = body.stream === true;
  const request = chatPost(ctx, "/responses", body, stream);
  if (stream) {
    const source = await upstream.call(request);
    return { kind: "stream", batches: new PassedEvents(source, new ResponsesEvents(call.shown)) };
  }
  const answer = await upstream.json(request);
  if (!isObject(answer)) throw malformed("response: expected a JSON object");
  Object.assign(answer, call.shown);
  return { kind: "json", body: answer, usage: responsesUsage(answer.usage) };
}

/** A passed-through Responses stream's events: `[DONE]` left out, each Response object with
 * the client's fields, the usage and the Response of the event that ends the answer. The body's
 * end is the stream's. */
class ResponsesEvents implements EventReading {
  readonly #shown: Record<string, unknown>;

  constructor(shown: Record<string, unknown>) {
    this.#shown = shown;
  }

  read(event: SseEvent): PassedEvent {
    if (event.data === "[DONE]") return { data: null };
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      throw upstreamError("The upstream provider sent an event that is not JSON.");
    }
    if (!isObject(data)) return { data: null };
    const passed: PassedEvent = { data: null };
    if (typeof data.sequence_number === "number") passed.sequence = data.sequence_number + 1;
    if (isObject(data.response)) {
      Object.assign(data.response, this.#shown);
      if (FINAL_EVENTS.has(data.type as string)) {
        passed.final = data.response;
        const usage = responsesUsage(data.response.usage);
        if (usage) passed.usage = usage;
      }
    }
    passed.data = JSON.stringify(data);
    passed.name = String(data.type);
    return passed;
  }

  unfinished(): null {
    return null;
  }
}

/** A Responses usage object as the canonical usage (for the log). */
export function responsesUsage(usage: unknown): Usage | null {
  if (!isObject(usage)) return null;
  const count = (v: unknown) => typeof v === "number" && Number.isFinite(v) ? v : 0;
  const result: Usage = { input: count(usage.input_tokens), output: count(usage.output_tokens) };
  if (isObject(usage.input_tokens_details)) {
    result.cachedInput = count(usage.input_tokens_details.cached_tokens);
  }
  if (isObject(usage.output_tokens_details)) {
    result.reasoning = count(usage.output_tokens_details.reasoning_tokens);
  }
  return result;
}
