/**
 * A Responses request passed through to an upstream with the Responses API: the body as sent
 * with the upstream's model id; a `previous_response_id` the gateway stored is replaced by the
 * stored conversation sent in full (the upstream may not have it, or have another id for
 * it), and reasoning items in the gateway's envelope (from another provider, which OpenAI
 * cannot check) are left out and named in `x-switchyard-dropped-params`. The answer comes back
 * with only `model` (and `previous_response_id`) written as the client knows them: JSON, or
 * the upstream's events one for one, the usage read for the log and the response stored
 * before the final event is forwarded.
 */
import { ApiError, upstreamError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import { sseResponse } from "../../http/sse.ts";
import type { ResponsesAnswer, ResponsesEvents } from "../../providers/openai/responses.ts";
import type { CallContext } from "../../providers/types.ts";
import { isObject } from "../../validation/reader.ts";
import { followed, untilClientLeaves, withDropped } from "../shared/model_call.ts";
import type { WireObject } from "./output.ts";
import { isEnvelope } from "./reasoning_envelope.ts";
import { encodeResponseEvent } from "./stream.ts";
import { inputItems, keep, type Turn } from "./turn.ts";
import type { Usage } from "../../canonical/result.ts";

/** What the provider's passthrough is called with. */
type PassResponses = (body: Record<string, unknown>, ctx: CallContext) => Promise<ResponsesAnswer>;

/** The name reported for reasoning items that were left out. */
const DROPPED_REASONING = "input.reasoning";
/** The events that end a Responses stream with the whole response. */
const FINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Answers the turn with the upstream's own Responses API. */
export async function passThrough(turn: Turn, responses: PassResponses): Promise<Response> {
  const { ctx, req, call } = turn;
  const input = inputItems(req.input.value);
  // The model id is the provider's to set: the route that takes the call knows its upstream's.
  const body: Record<string, unknown> = { ...ctx.body };
  const sent = turn.previous === null ? input : [...turn.previous.history, ...input];
  if (turn.previous !== null) delete body.previous_response_id;
  const kept = sent.filter((item) => !foreignReasoning(item));
  if (kept.length < sent.length) call.dropped.add(DROPPED_REASONING);
  if (turn.previous !== null || kept.length < sent.length) body.input = kept;
  const shown = (response: WireObject) => {
    response.model = turn.record.id;
    if (req.previousResponseId !== null) response.previous_response_id = req.previousResponseId;
    return response;
  };

  if (!req.stream) {
    const answer = await untilClientLeaves(ctx, () => responses(body, call));
    if (answer.kind !== "json") throw upstreamError("The upstream answered with a stream.");
    const response = shown(answer.body);
    ctx.usage = usageOf(response.usage);
    await keep(turn, response, input, outputOf(response));
    return withDropped(json(response), call);
  }

  ctx.stream = true;
  const abort = new AbortController();
  call.signal = followed(abort, ctx.signal);
  const answer = await untilClientLeaves(ctx, () => responses(body, call));
  if (answer.kind !== "stream") throw upstreamError("The upstream answered without a stream.");
  ctx.settleLater();
  return withDropped(
    sseResponse(forwarded(answer.events, turn, abort, (response) => shown(response), input)),
    call,
  );
}

/** The upstream's events, rewritten and forwarded one read at a time; settles the request. */
function forwarded(
  events: ResponsesEvents,
  turn: Turn,
  abort: AbortController,
  shown: (response: WireObject) => WireObject,
  input: WireObject[],
): ReadableStream<Uint8Array> {
  const { ctx } = turn;
  const encoder = new TextEncoder();
  let closed = false;
  let sequence = 0;
  const end = (status: number, error: string | null) => {
    closed = true;
    events.close();
    ctx.settle(status, error);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const read = await events.readEvents();
          if (closed) return;
          if (read === null) {
            controller.close();
            end(200, null);
            return;
          }
          let out = "";
          for (const event of read) {
            if (event.data === "[DONE]") continue;
            let data: unknown;
            try {
              data = JSON.parse(event.data);
            } catch {
              throw upstreamError("The upstream provider sent an event that is not JSON.");
            }
            if (!isObject(data)) continue;
            if (typeof data.sequence_number === "number") sequence = data.sequence_number + 1;
            if (isObject(data.response)) {
              shown(data.response);
              if (FINAL_EVENTS.has(data.type as string)) {
                ctx.usage = usageOf(data.response.usage);
                await keep(turn, data.response, input, outputOf(data.response));
              }
            }
            out += encodeResponseEvent(data);
          }
          if (out !== "") {
            controller.enqueue(encoder.encode(out));
            return;
          }
        }
      } catch (e) {
        if (closed) return;
        if (ctx.signal.aborted || abort.signal.aborted) {
          controller.close();
          end(499, "client_disconnected");
          return;
        }
        const error = e instanceof ApiError ? e : upstreamError("The upstream stream failed.");
        controller.enqueue(encoder.encode(encodeResponseEvent({
          type: "error",
          code: error.code ?? error.type,
          message: error.message,
          param: null,
          sequence_number: sequence,
        })));
        controller.close();
        end(error.status, error.code ?? error.type);
      }
    },
    cancel() {
      if (closed) return;
      abort.abort(new DOMException("The client closed the connection.", "AbortError"));
      end(499, "client_disconnected");
    },
  }, { highWaterMark: 0 });
}

/** Whether an input item is a reasoning item in the gateway's envelope (another provider's). */
function foreignReasoning(item: WireObject): boolean {
  return isObject(item) && item.type === "reasoning" &&
    typeof item.encrypted_content === "string" &&
    isEnvelope(item.encrypted_content);
}

/** A Response's output items. */
function outputOf(response: WireObject): WireObject[] {
  return Array.isArray(response.output) ? response.output.filter(isObject) : [];
}

/** A Responses usage object as the canonical usage (for the log). */
function usageOf(usage: unknown): Usage | null {
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
