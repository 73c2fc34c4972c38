/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (Anthropic's Messages API): validate
 * into a canonical request, resolve the model and check its capabilities; then, for a model of
 * an Anthropic-style provider, forward the call as written (only the model id rewritten); for
 * any other, call its provider through the canonical model and answer a message or its SSE
 * events. Request fields the back end left out are named in `x-switchyard-dropped-params`.
 */
import { inputTokens } from "../shared/input_tokens.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import type { CanonicalRequest, Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { Uses } from "../../canonical/uses.ts";
import type { ApiError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { aroundModel } from "../../pipeline/model_step.ts";
import { lacksCountTokens, type PassthroughCall, type Provider } from "../../providers/types.ts";
import { checkChat } from "../shared/capabilities.ts";
import {
  callChat,
  type ChatDoor,
  type ModelTarget,
  openModel,
  untilClientLeaves,
} from "../shared/model_call.ts";
import { HeldRequest } from "../shared/held_request.ts";
import { answerPassedThrough, type PassedAnswers } from "../shared/passed_call.ts";
import { parseMessagesRequest } from "./request.ts";
import { contentBlocks, messageId, renderMessage } from "./response.ts";
import { withoutGatewayThinking } from "./signature.ts";
import { MessagesStreamRenderer, sseEvent } from "./stream.ts";

/** Client headers an Anthropic upstream gets. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"] as const;

/** The Messages handler. */
export function createMessage(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const { req, uses, dropped } = parseMessagesRequest(ctx.body, config.limits);
  return callChat(ctx, openModel(ctx, req.model), new MessagesDoor(ctx, req, uses, dropped));
}

/** The Messages protocol's side of a chat call. */
class MessagesDoor implements ChatDoor {
  readonly name = "messages";
  readonly stream: boolean;
  readonly needs;
  readonly passthrough;
  readonly #ctx: RequestContext;
  readonly #req: HeldRequest;
  readonly #dropped: ReadonlySet<string>;

  constructor(ctx: RequestContext, req: CanonicalRequest, uses: Uses, dropped: Set<string>) {
    this.#ctx = ctx;
    this.#req = new HeldRequest(req);
    this.#dropped = dropped;
    this.stream = req.stream;
    this.needs = { tools: req.options.tools.length, uses, protocol: PROTOCOL };
    this.passthrough = {
      speaks: (provider: Provider) => provider.passes?.has("anthropic_messages") ?? false,
      answer: (target: ModelTarget) => this.#forward(target),
    };
  }

  /** The call passed through as written to a back end that speaks the Messages API. */
  #forward(target: ModelTarget): Promise<Response> {
    const req = this.#req.take();
    const sent = passed(this.#ctx, "messages", target.call.model.id);
    return answerPassedThrough(this.#ctx, target, req, sent, MESSAGES_ANSWERS);
  }

  canonical({ call }: ModelTarget): CanonicalRequest {
    return this.#req.canonical(this.#ctx, call, this.#dropped);
  }

  answer(result: CanonicalResult, { record }: ModelTarget): unknown {
    return renderMessage(result, {
      id: messageId(result.id, this.#ctx.requestId),
      model: record.id,
    });
  }

  /** The stream's renderer; its `message_start` carries the estimate of the prompt (a count
   * from the back end would be a call before the answer's). */
  renderer({ record }: ModelTarget, req: CanonicalRequest): MessagesStreamRenderer {
    return new MessagesStreamRenderer({
      requestId: this.#ctx.requestId,
      model: record.id,
      estimate: promptTokens(req),
    });
  }

  logged(parts: readonly Part[]): unknown {
    return contentBlocks(parts);
  }
}

/** The protocol, as capability refusals name it. */
const PROTOCOL = "Anthropic's Messages API";

/** How passed-through Messages calls are answered: the log shows a message's content blocks. */
const MESSAGES_ANSWERS: PassedAnswers = {
  name: "messages",
  logged: (body) => body.content,
  errorEvent,
};

/** The count_tokens handler: `{"input_tokens": N}`, exact from an Anthropic upstream (its own
 * count_tokens) and the simulator, else the gateway's estimate (see {@link inputTokens}): also
 * for an Anthropic-style upstream that has no count_tokens (404 or 405, as many compatible
 * servers answer; see `lacksCountTokens`), since clients such as Claude Code call it before
 * every turn. */
export async function countMessageTokens(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const { req, uses } = parseMessagesRequest(ctx.body, config.limits, true);
  const { record, provider: adapter, call } = openModel(ctx, req.model);
  // The model steps see a count too (guardrails keep what they redact from the upstream's
  // count_tokens); a step without a count of its own leaves it to the estimate.
  const stepped = aroundModel(ctx.services.modelSteps, adapter, ctx, record, "count");
  const provider = stepped ?? adapter;
  const passedThrough = stepped === null && (provider.passes?.has("anthropic_messages") ?? false);
  checkChat(record, { tools: req.options.tools.length, uses, protocol: PROTOCOL, passedThrough });
  if (passedThrough) {
    const passthrough = provider.passthrough!.bind(provider);
    const sent = passed(ctx, "count_tokens", record.id);
    const answer = await untilClientLeaves(
      ctx,
      () =>
        passthrough(sent, call).catch((e: unknown) => {
          if (lacksCountTokens(e)) return null;
          throw e;
        }),
    );
    if (answer !== null) return json(answer.kind === "json" ? answer.body : {});
  }
  return json({ input_tokens: await inputTokens(provider, req, call) });
}

/** The client's call as it is passed through: its body (without the thinking blocks of other
 * styles), its Anthropic headers, and the model id the answer shows. */
function passed(
  ctx: RequestContext,
  endpoint: "messages" | "count_tokens",
  model: string,
): PassthroughCall {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = ctx.request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  // Taken from the context: a passed-through stream need not keep the body.
  const raw = ctx.takeBodyBytes();
  const sent = ctx.takeBody();
  const body = withoutGatewayThinking(sent);
  const call: PassthroughCall = {
    protocol: "anthropic_messages",
    endpoint,
    body,
    headers,
    shown: { model },
  };
  if (raw !== null && body === sent) call.raw = raw;
  return call;
}

/** A failure after the stream began, as a Messages `error` event. */
function errorEvent(error: ApiError): string {
  const { type, error: detail } = error.toAnthropicBody();
  return sseEvent({ type, error: detail });
}
