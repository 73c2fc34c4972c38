import type { CanonicalEvent } from "../../canonical/events.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { ApiError, clientClosed, internalError } from "../../errors.ts";
import { eventStreamResponse, type StreamRenderer } from "../../http/sse_response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { CallContext, Provider } from "../../providers/types.ts";
import { RoutedProvider } from "../../routing/routed_provider.ts";

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

/** `abort`'s signal, aborted also when `signal` is (one listener; `AbortSignal.any` costs
 * several microseconds per request). */
export function followed(abort: AbortController, signal: AbortSignal): AbortSignal {
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener("abort", () => abort.abort(signal.reason), { once: true });
  return abort.signal;
}

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

/** The response with the dropped-params header, when the back end dropped any. */
export function withDropped(response: Response, call: CallContext): Response {
  if (call.dropped.size > 0) {
    response.headers.set(DROPPED_HEADER, [...call.dropped].sort().join(","));
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
