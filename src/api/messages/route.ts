/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (Anthropic's Messages API): validate
 * into a canonical request, resolve the model and check its capabilities; then, for a model of
 * an Anthropic-style provider, forward the call as written (only the model id rewritten); for
 * any other, call its provider through the canonical model and answer a message or its SSE
 * events. Request fields the back end left out are named in `x-switchyard-dropped-params`.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { type ApiError, internalError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { Logger } from "../../log/logger.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { resolve } from "../../pipeline/resolve.ts";
import { lacksCountTokens } from "../../providers/anthropic/passthrough.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import type { CallContext, Provider } from "../../providers/types.ts";
import { loggedMessages, StreamedParts } from "../shared/log_content.ts";
import {
  followed,
  modelCall,
  streamAnswer,
  untilClientLeaves,
  withDropped,
} from "../shared/model_call.ts";
import { checkCapabilities } from "./capabilities.ts";
import { forwardedResponse } from "./forward.ts";
import { parseMessagesRequest } from "./request.ts";
import { contentBlocks, messageId, renderMessage } from "./response.ts";
import { withoutGatewayThinking } from "./signature.ts";
import { MessagesStreamRenderer } from "./stream.ts";

/** Client headers an Anthropic upstream gets. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"] as const;

/** What the log keeps of a Messages call's content (with `logs.include_content`). */
interface LoggedContent {
  messages: { role: string; content: string }[];
  output: unknown;
}

/** The Messages handler. */
export async function createMessage(ctx: RequestContext): Promise<Response> {
  const { config, logger } = ctx.services;
  const { req, uses } = parseMessagesRequest(ctx.body, config.limits);
  const record = resolve(ctx, req.model);
  const { provider, call } = modelCall(ctx, record);
  checkCapabilities(req, uses, record, provider.forwardMessages !== undefined);
  const content: LoggedContent | null = config.logs.include_content
    ? { messages: loggedMessages(req.messages), output: null }
    : null;
  if (content) ctx.content = content;
  // A stream's call also stops when its response body is cancelled (`abort`).
  const abort = new AbortController();
  if (req.stream) call.signal = followed(abort, ctx.signal);
  const onUnexpected = streamFailure(ctx, logger);

  if (provider.forwardMessages) {
    const forward = provider.forwardMessages.bind(provider);
    return await untilClientLeaves(ctx, async () => {
      const answer = await forward(forwarded(ctx, "messages"), call);
      if (content && answer.kind === "json") content.output = answer.body.content;
      return forwardedResponse(ctx, answer, abort, onUnexpected);
    });
  }

  for (const name of Object.keys(req.extras.fields)) call.dropped.add(name);
  // The canonical request holds what the body held: a stream need not keep the body as well.
  ctx.takeBody();
  if (!req.stream) {
    const result = await untilClientLeaves(ctx, () => provider.chat(req, call));
    ctx.usage = result.usage;
    const message = renderMessage(result, {
      id: messageId(result.id, ctx.requestId),
      model: record.id,
    });
    if (content) content.output = message.content;
    return withDropped(json(message), call);
  }

  ctx.stream = true;
  return await streamMessage(ctx, provider, req, call, abort, content, record.id);
}

/** A bug in a stream, logged and answered as a 500 naming the request id. (Made apart from the
 * handler: see {@link streamMessage}.) */
function streamFailure(ctx: RequestContext, logger: Logger): (error: unknown) => ApiError {
  return (error) => {
    logger.error("messages stream failed", error, ctx.requestId);
    return internalError(ctx.requestId);
  };
}

/** The canonical stream's answer. (A function of its own, whose closures do not use the
 * request: V8 keeps the variables that a function's closures use together, so closures made in
 * the handler would keep the request, the whole prompt, as long as the stream.) */
async function streamMessage(
  ctx: RequestContext,
  provider: Provider,
  req: CanonicalRequest,
  call: CallContext,
  abort: AbortController,
  content: LoggedContent | null,
  model: string,
): Promise<Response> {
  const streamed = content ? new StreamedParts() : null;
  const renderer = new MessagesStreamRenderer({
    requestId: ctx.requestId,
    model,
    estimate: await inputTokens(provider, req, call),
  });
  const response = await streamAnswer(ctx, provider.chatStream(req, call), renderer, {
    abort,
    signal: call.signal,
    name: "messages",
    observe: streamed ? (events) => streamed.add(events) : undefined,
    ended() {
      if (content && streamed) content.output = contentBlocks(streamed.parts);
    },
  });
  return withDropped(response, call);
}

/** The count_tokens handler: `{"input_tokens": N}`, exact from an Anthropic upstream (its own
 * count_tokens) and the simulator, else the gateway's estimate (see {@link inputTokens}): also
 * for an Anthropic-style upstream that has no count_tokens (404 or 405, as many compatible
 * servers answer; see `lacksCountTokens`), since clients such as Claude Code call it before
 * every turn. */
export async function countMessageTokens(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const { req, uses } = parseMessagesRequest(ctx.body, config.limits, true);
  const record = resolve(ctx, req.model);
  const { provider, call } = modelCall(ctx, record);
  checkCapabilities(req, uses, record, provider.forwardMessages !== undefined);
  if (provider.forwardMessages) {
    const forward = provider.forwardMessages.bind(provider);
    const answer = await untilClientLeaves(
      ctx,
      () =>
        forward(forwarded(ctx, "count_tokens"), call).catch((e: unknown) => {
          if (lacksCountTokens(e)) return null;
          throw e;
        }),
    );
    if (answer !== null) return json(answer.kind === "json" ? answer.body : {});
  }
  return json({ input_tokens: await inputTokens(provider, req, call) });
}

/**
 * The input tokens of a request: the back end's own count when it has one, else the estimate
 * of the simulator's tokenizer (a word, or one other character, a token; images 85 tokens;
 * tools by their JSON), which is close to, but not, what OpenAI-style upstreams count.
 */
function inputTokens(
  provider: Provider,
  req: CanonicalRequest,
  call: CallContext,
): Promise<number> {
  return provider.countTokens?.(req, call) ?? Promise.resolve(promptTokens(req));
}

/** The client's call as it is forwarded: its body (without the thinking blocks of other
 * styles) and its Anthropic headers. */
function forwarded(ctx: RequestContext, endpoint: "messages" | "count_tokens") {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = ctx.request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  // Taken from the context: a forwarded stream need not keep the body.
  return { endpoint, body: withoutGatewayThinking(ctx.takeBody()), headers };
}
