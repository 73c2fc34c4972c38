/**
 * The one model-call path of chat calls (DESIGN §3), the same for every front door: the model
 * resolved with its adapter ({@link openModel}); then {@link callChat} checks its capabilities
 * against what the request uses, passes the call through to a back end that speaks the door's
 * protocol or applies the defaults and calls the adapter on the canonical request, and answers
 * it whole or as a stream, recording what the log shows. A door only parses its wire format
 * and renders answers (its {@link ChatDoor}).
 */
import { followingAbort } from "../../abort.ts";
import type { CanonicalRequest, Part } from "../../canonical/conversation.ts";
import { DEFAULT_MAX_TOKENS } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { ApiError, clientClosed, internalError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import { eventStreamResponse, type StreamRenderer } from "../../http/sse_response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { aroundModel } from "../../pipeline/model_step.ts";
import { resolve } from "../../pipeline/resolve.ts";
import type { CallContext, Provider } from "../../providers/types.ts";
import { RoutedProvider } from "../../routing/routed_provider.ts";
import { type ChatNeeds, checkChat } from "./capabilities.ts";
import { loggedMessages } from "../../log/content.ts";
import { StreamedParts } from "./log_content.ts";
import type { Uses } from "../../canonical/uses.ts";

/** A resolved model, the adapter that calls it and the call's context. */
export interface ModelTarget {
  record: ModelRecord;
  provider: Provider;
  call: CallContext;
}

/** The model a request names, resolved (visible, permitted: `pipeline/resolve.ts`), with its
 * adapter. */
export function openModel(ctx: RequestContext, model: string): ModelTarget {
  const record = resolve(ctx, model);
  return { record, ...modelCall(ctx, record) };
}

/** A front door's side of a chat call: what the request needs, and how the door turns it into
 * a canonical request and renders the answers. */
export interface ChatDoor {
  /** Names the door's streams in the error log of a bug ("chat", "messages"...). */
  readonly name: string;
  /** Whether the client asked for a stream. */
  readonly stream: boolean;
  /** What the request asks of the model (see `capabilities.ts`). */
  readonly needs: Omit<ChatNeeds, "passedThrough">;
  /** The door's own protocol, for a back end that speaks it: the call answered as written. */
  readonly passthrough?: {
    speaks(provider: Provider): boolean;
    answer(target: ModelTarget): Promise<Response>;
  };
  /** The request in canonical form (the door may let go of the body then). */
  canonical(target: ModelTarget): CanonicalRequest | Promise<CanonicalRequest>;
  /** The body answering a whole result (a door may store it first). */
  answer(result: CanonicalResult, target: ModelTarget): unknown;
  /** The renderer of the answer's stream. */
  renderer(target: ModelTarget, req: CanonicalRequest): StreamRenderer | Promise<StreamRenderer>;
  /** The stream as it is rendered, when the door must see it first (the Responses door stores
   * the answer before its last event). */
  events?(events: AsyncIterable<CanonicalEvent[]>): AsyncIterable<CanonicalEvent[]>;
  /** What the request log shows of an answer's parts (with `logs.include_content`). */
  logged(parts: readonly Part[]): unknown;
}

/** What the log keeps of a chat call's content (with `logs.include_content`). */
interface LoggedContent {
  messages: { role: string; content: string }[];
  output: unknown;
}

/** Answers a chat call through `door` (see the module comment). */
export async function callChat(
  ctx: RequestContext,
  target: ModelTarget,
  door: ChatDoor,
): Promise<Response> {
  const { record, call } = target;
  // The model steps see the call in canonical form, so a call they act on is not passed on.
  const stepped = aroundModel(ctx.services.modelSteps, target.provider, ctx, record);
  const provider = stepped ?? target.provider;
  const passedThrough = stepped === null && (door.passthrough?.speaks(provider) ?? false);
  checkChat(record, { ...door.needs, passedThrough });
  if (passedThrough) {
    const answer = await door.passthrough!.answer(target);
    // A door that did not send the client's bytes (the Responses API's) lets go of them too:
    // the context lives as long as a stream.
    ctx.bodyBytes = null;
    return withStepHeaders(answer, ctx);
  }
  // Only a call passed on as written needs the body's bytes.
  ctx.bodyBytes = null;
  const req = await door.canonical(target);
  if (!req.options.maxTokensGiven) {
    // `??` also covers records stored before the field existed.
    req.options.maxTokens = record.default_max_tokens ?? DEFAULT_MAX_TOKENS;
  }
  const hosted = hostedLeftOut(ctx, record, door.needs.uses);
  const content: LoggedContent | null = ctx.services.config.logs.include_content
    ? { messages: loggedMessages(req.messages), output: null }
    : null;
  if (content) ctx.content = content;
  if (!door.stream) {
    const result = await untilClientLeaves(ctx, () => provider.chat(req, call));
    ctx.usage = result.usage;
    const body = await door.answer(result, target);
    if (content) content.output = door.logged(result.parts);
    return withStepHeaders(withDropped(json(body), call, hosted), ctx);
  }
  ctx.stream = true;
  // A stream's call also stops when its response body is cancelled (`abort`).
  const abort = followingAbort(ctx.signal);
  call.signal = abort.signal;
  const renderer = await door.renderer(target, req);
  return await streamChat(ctx, target, door, provider.chatStream(req, call), renderer, {
    abort,
    content,
    hosted,
  });
}

/** The stream's answer. (A function of its own, whose closures do not use the request: V8 keeps
 * the variables that a function's closures use together, so closures made beside the request
 * would keep it, the whole prompt, as long as the stream.) */
async function streamChat(
  ctx: RequestContext,
  target: ModelTarget,
  door: ChatDoor,
  events: AsyncIterable<CanonicalEvent[]>,
  renderer: StreamRenderer,
  { abort, content, hosted }: {
    abort: AbortController;
    content: LoggedContent | null;
    hosted: readonly string[];
  },
): Promise<Response> {
  const streamed = content ? new StreamedParts() : null;
  const response = await streamAnswer(ctx, door.events?.(events) ?? events, renderer, {
    abort,
    signal: target.call.signal,
    name: door.name,
    observe: streamed ? (batch) => streamed.add(batch) : undefined,
    ended() {
      if (content && streamed) content.output = door.logged(streamed.parts);
      // A routed stream that went on from another route started its dropped params anew.
      for (const name of hosted) target.call.dropped.add(name);
    },
  });
  return withStepHeaders(withDropped(response, target.call, hosted), ctx);
}

/** The adapter and call context for a resolved model (see `pipeline/resolve.ts`): its
 * provider's, or for a model with several routes one that tries them (DESIGN §6.3). */
export function modelCall(
  ctx: RequestContext,
  record: ModelRecord,
): { provider: Provider; call: CallContext } {
  const call: CallContext = {
    signal: ctx.signal,
    requestId: ctx.requestId,
    upstreamModel: record.upstream_model,
    model: record,
    dropped: new Set(),
  };
  const { providers, routes: health, random, config } = ctx.services;
  if (record.routes !== undefined && record.routes.length > 1) {
    const routes = record.routes;
    const provider = providers.routed(record, () => {
      const targets = routes.flatMap((route) => {
        const provider = providers.get(route.provider);
        const style = config.providers.find((p) => p.id === route.provider)?.style;
        return provider
          ? [{
            route,
            health: health.of(record.id, route),
            provider,
            prefill: style !== undefined && PREFILL.has(style),
          }]
          : [];
      });
      const continueOnFailure = record.continue_on_failure ?? false;
      return new RoutedProvider(record.id, targets, { random, continueOnFailure });
    });
    call.attempting = (route) => {
      ctx.provider = route.provider;
    };
    call.served = (route) => {
      ctx.route = `${route.provider}/${route.upstream_model}`;
    };
    call.fellBack = (route, error) => {
      const kind = error instanceof ApiError ? error.code ?? error.type : "internal_error";
      ctx.fallbacks.push({ provider: route.provider, kind });
    };
    return { provider, call };
  }
  const provider = providers.get(record.provider);
  // resolve only returns models whose provider is available.
  if (!provider) throw internalError(ctx.requestId);
  return { provider, call };
}

/** Provider styles that go on from an assistant prefill (a routed stream's continuation). */
const PREFILL: ReadonlySet<string> = new Set(["anthropic", "simulator"]);

/** The response header naming the request fields the back end could not honour. */
const DROPPED_HEADER = "x-switchyard-dropped-params";

/** Runs a provider call; a failure caused by the client leaving is reported as such (499),
 * not as a server error, and a failure in the status of the front door's protocol (an
 * overloaded upstream is a 529 on the Messages front door: `ApiError.inStyle`). */
export async function untilClientLeaves<T>(ctx: RequestContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (!(e instanceof ApiError)) throw ctx.signal.aborted ? clientClosed() : e;
    throw ctx.endpoint?.errors === "anthropic" ? e.inStyle("anthropic") : e;
  }
}

/** The hosted tools of a call not passed through (`Uses.hostedTools`), which the back end
 * goes without: their dropped-param names (`tools.web_search`), also told to the log. (A model
 * whose `hosted_tools` policy is `refuse` has refused them in `checkChat`.) */
function hostedLeftOut(ctx: RequestContext, record: ModelRecord, uses: Uses): string[] {
  if (uses.hostedTools.length === 0) return [];
  const names = [...new Set(uses.hostedTools.map((h) => `tools.${h.type}`))];
  ctx.services.logger.info(
    `${ctx.requestId}: hosted tools left out for model ${record.id}, whose back end cannot run them: ${
      names.map((n) => n.slice(6)).join(", ")
    }`,
  );
  return names;
}

/** The response with the dropped-params header, when the back end dropped any (`also`: names
 * dropped before the call, which a routed call's attempts do not see). */
export function withDropped(
  response: Response,
  call: CallContext,
  also: readonly string[] = [],
): Response {
  for (const name of also) call.dropped.add(name);
  if (call.dropped.size > 0) {
    response.headers.set(DROPPED_HEADER, [...call.dropped].sort().join(","));
  }
  return response;
}

/** The response with the headers the model steps added (`ctx.responseHeaders`). */
function withStepHeaders(response: Response, ctx: RequestContext): Response {
  const headers = ctx.responseHeaders;
  if (headers !== null) {
    for (const name in headers) response.headers.set(name, headers[name]!);
  }
  return response;
}

/** Options for {@link streamAnswer}. */
export interface StreamAnswerOptions {
  /** Aborted when the client stops reading (the call's signal follows it). */
  abort: AbortController;
  /** The signal the back end got. */
  signal: AbortSignal;
  /** Names the stream in the error log of a bug ("chat", "messages"...). */
  name: string;
  /** Sees every batch (the usage needs none: the settle step takes the stream's tally's). */
  observe?: ((events: readonly CanonicalEvent[]) => void) | undefined;
  /** Runs once the stream ended, before the request settles (the logged content). */
  ended?(): void;
}

/** A canonical stream answered as SSE by `renderer` (every front door's stream): the request
 * settled when the stream ends (with the last usage it reported, from its tally), a client
 * leaving before the first bytes a 499, a bug a 500 naming only the request id. */
export function streamAnswer(
  ctx: RequestContext,
  events: AsyncIterable<CanonicalEvent[]>,
  renderer: StreamRenderer,
  options: StreamAnswerOptions,
): Promise<Response> {
  const { observe, ended, name } = options;
  return untilClientLeaves(ctx, () =>
    eventStreamResponse(events, renderer, {
      abort: options.abort,
      signal: options.signal,
      observe,
      settleLater: () => ctx.settleLater(),
      settle({ status, error }) {
        ended?.();
        ctx.settle(status, error);
      },
      onUnexpected(error) {
        ctx.services.logger.error(`${name} stream failed`, error, ctx.requestId);
        return internalError(ctx.requestId);
      },
    }));
}
