/**
 * A door's call passed through as written to a back end that speaks its protocol (DESIGN §6.2's
 * same-protocol path; `Provider.passes`), answered in the door's protocol: the upstream's JSON
 * with its usage, or its stream (`passed_stream.ts`); the log's content from the canonical
 * request the door parsed.
 */
import { followingAbort } from "../../abort.ts";
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { type ApiError, internalError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { PassthroughCall } from "../../providers/types.ts";
import { loggedMessages } from "../../log/content.ts";
import { type ModelTarget, untilClientLeaves } from "./model_call.ts";
import { passedStream, type PassedStreamOptions } from "./passed_stream.ts";

/** How a door answers its passed-through calls. */
export interface PassedAnswers {
  /** Names the door's streams in the error log of a bug ("messages", "gemini"). */
  name: string;
  /** What the log shows of a JSON answer's output. */
  logged(body: Record<string, unknown>): unknown;
  /** The door's error event for a failure after the stream began. */
  errorEvent(error: ApiError, sequence: number): string;
}

/** Passes `sent` (the client's call, parsed as `req`) to `target`'s back end and answers. */
export function answerPassedThrough(
  ctx: RequestContext,
  { provider, call }: ModelTarget,
  req: CanonicalRequest,
  sent: PassthroughCall,
  answers: PassedAnswers,
): Promise<Response> {
  const content = ctx.services.config.logs.include_content
    ? { messages: loggedMessages(req.messages), output: null as unknown }
    : null;
  if (content) ctx.content = content;
  // A stream's call also stops when its response body is cancelled (`abort`).
  const abort = followingAbort(ctx.signal);
  if (req.stream) call.signal = abort.signal;
  const passthrough = provider.passthrough!.bind(provider);
  return untilClientLeaves(ctx, async () => {
    const answer = await passthrough(sent, call);
    if (answer.kind === "json") {
      ctx.usage = answer.usage;
      if (content) content.output = answers.logged(answer.body);
      return json(answer.body);
    }
    return await passedStream(ctx, answer.batches, streamOptions(ctx, abort, answers));
  });
}

/** What the stream's answer needs. (Made apart from {@link answerPassedThrough}: V8 keeps the
 * variables that a function's closures use together, so a closure made there would keep the
 * call as sent, the whole prompt, as long as the stream; `tests/perf/stream_prompt_test.ts`.) */
function streamOptions(
  ctx: RequestContext,
  abort: AbortController,
  answers: PassedAnswers,
): PassedStreamOptions {
  return {
    abort,
    errorEvent: answers.errorEvent,
    onUnexpected: (error) => {
      ctx.services.logger.error(`${answers.name} stream failed`, error, ctx.requestId);
      return internalError(ctx.requestId);
    },
  };
}
