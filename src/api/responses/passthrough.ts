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
import { followingAbort } from "../../abort.ts";
import { type ApiError, upstreamError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { CallContext, PassthroughAnswer, PassthroughCall } from "../../providers/types.ts";
import { isObject } from "../../validation/reader.ts";
import { untilClientLeaves, withDropped } from "../shared/model_call.ts";
import { passedStream } from "../shared/passed_stream.ts";
import type { WireObject } from "./output.ts";
import { isEnvelope } from "./reasoning_envelope.ts";
import { encodeResponseEvent } from "./stream.ts";
import { inputItems, keep, type Turn } from "./turn.ts";

/** What the provider's passthrough is called with. */
type Pass = (call: PassthroughCall, ctx: CallContext) => Promise<PassthroughAnswer>;

/** The name reported for reasoning items that were left out. */
const DROPPED_REASONING = "input.reasoning";

/** Answers the turn with the upstream's own Responses API. */
export async function passThrough(turn: Turn, pass: Pass): Promise<Response> {
  const { ctx, req, call } = turn;
  const input = inputItems(req.input.value);
  const body: Record<string, unknown> = { ...ctx.body };
  const sent = turn.previous === null ? input : [...turn.previous.history, ...input];
  if (turn.previous !== null) delete body.previous_response_id;
  const kept = sent.filter((item) => !foreignReasoning(item));
  if (kept.length < sent.length) call.dropped.add(DROPPED_REASONING);
  if (turn.previous !== null || kept.length < sent.length) body.input = kept;
  // The model id is the provider's to set: the route that takes the call knows its upstream's.
  const shown: Record<string, unknown> = { model: turn.record.id };
  if (req.previousResponseId !== null) shown.previous_response_id = req.previousResponseId;
  const passed: PassthroughCall = {
    protocol: "openai_responses",
    endpoint: "responses",
    body,
    headers: {},
    shown,
  };
  const store = (response: WireObject) => keep(turn, response, input, outputOf(response));

  if (!req.stream) {
    const answer = await untilClientLeaves(ctx, () => pass(passed, call));
    if (answer.kind !== "json") throw upstreamError("The upstream answered with a stream.");
    ctx.usage = answer.usage;
    await store(answer.body);
    return withDropped(json(answer.body), call);
  }

  const abort = followingAbort(ctx.signal);
  call.signal = abort.signal;
  return withDropped(
    await untilClientLeaves(ctx, async () => {
      const answer = await pass(passed, call);
      if (answer.kind !== "stream") throw upstreamError("The upstream answered without a stream.");
      return await passedStream(ctx, answer.batches, {
        abort,
        finished: store,
        errorEvent,
        onUnexpected: () => upstreamError("The upstream stream failed."),
      });
    }),
    call,
  );
}

/** A failure after the stream began, as a Responses `error` event. */
function errorEvent(error: ApiError, sequence: number): string {
  return encodeResponseEvent({
    type: "error",
    code: error.code ?? error.type,
    message: error.message,
    param: null,
    sequence_number: sequence,
  });
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
