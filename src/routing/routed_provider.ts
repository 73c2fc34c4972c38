/**
 * A model with several routes as one provider (DESIGN §6.3): each call tries the routes in
 * `routeOrder`'s order and moves to the next on a failure that is not the caller's fault (an
 * upstream 429, 5xx, 529, timeout, connection failure or refused credentials: what adapters
 * report as 429 or 5xx) before the first byte; a caller's error (400) is not retried. A stream
 * cut after its first event ends as any stream does (the front door's error event), unless the
 * model continues on failure: then the next route that takes a prefill goes on from the partial
 * answer (continuation.ts). The route that served is reported through the call context.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import type { RouteConfig } from "../config/types.ts";
import { ApiError, clientClosed } from "../errors.ts";
import type {
  CallContext,
  PassProtocol,
  PassthroughAnswer,
  PassthroughCall,
  Provider,
} from "../providers/types.ts";
import { continuation, PartialAnswer, prefilled } from "./continuation.ts";
import type { RouteState } from "./health.ts";
import { routeOrder } from "./select.ts";

/** A route, its health and the adapter of its provider. */
export interface RouteTarget {
  route: RouteConfig;
  health: RouteState;
  provider: Provider;
  /** Whether its style continues an answer from a prefill (Anthropic, the simulator). */
  prefill: boolean;
}

/** What a routed provider needs besides its routes. */
export interface RoutingDeps {
  random: () => number;
  /** Whether a stream cut mid-way goes on on another route (`continue_on_failure`). */
  continueOnFailure?: boolean;
  /** Routes tried per request at most (default 4). */
  maxAttempts?: number;
}

/** Whether a failure may be the route's, so that another route may succeed. */
export function retryable(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 429 || error.status >= 500);
}

type Stream = AsyncIterator<CanonicalEvent[]>;

/** A stream that answered: its iterator and its first batch. */
interface Started {
  events: Stream;
  first: IteratorResult<CanonicalEvent[]>;
}

/** Tries a model's routes in order until one answers (see the module doc). */
export class RoutedProvider implements Provider {
  readonly id: string;
  readonly #targets: readonly RouteTarget[];
  readonly #deps: RoutingDeps;
  /** Moderation and image generation go to the first route, without fallback. */
  readonly moderate?: NonNullable<Provider["moderate"]>;
  readonly generateImages?: NonNullable<Provider["generateImages"]>;
  /** The same-protocol pass-throughs (Messages to Anthropic routes, Responses to
   * `responses_api` routes), with fallback before the answer, when every route has one: a model
   * whose routes mix styles is translated on all of them, so that its answers do not change
   * shape with the route. */
  readonly passes: ReadonlySet<PassProtocol>;
  /** Embeddings, with fallback, when every route has them. */
  readonly embed?: NonNullable<Provider["embed"]>;
  /** Rerank, with fallback, when every route has it. */
  readonly rerank?: NonNullable<Provider["rerank"]>;
  /** The back end's own token count, with fallback, when every route has one. */
  readonly countTokens?: NonNullable<Provider["countTokens"]>;

  constructor(model: string, targets: readonly RouteTarget[], deps: RoutingDeps) {
    this.id = `routes:${model}`;
    this.#targets = targets;
    this.#deps = deps;
    const { route, provider } = targets[0]!;
    const moderate = provider.moderate?.bind(provider);
    if (moderate) this.moderate = (req, ctx) => moderate(req, this.#attempt(ctx, route));
    const generate = provider.generateImages?.bind(provider);
    if (generate) this.generateImages = (req, ctx) => generate(req, this.#attempt(ctx, route));
    this.passes = new Set(
      [...provider.passes ?? []].filter((p) => targets.every((t) => t.provider.passes?.has(p))),
    );
    if (targets.every((t) => t.provider.embed)) {
      this.embed = async (req, ctx) =>
        (await this.#first(this.#order(), ctx, (t, c) => t.provider.embed!(req, c))).value;
    }
    if (targets.every((t) => t.provider.countTokens)) {
      this.countTokens = async (req, ctx) =>
        (await this.#first(this.#order(), ctx, (t, c) => t.provider.countTokens!(req, c))).value;
    }
    if (targets.every((t) => t.provider.rerank)) {
      this.rerank = async (req, ctx) =>
        (await this.#first(this.#order(), ctx, (t, c) => t.provider.rerank!(req, c))).value;
    }
  }

  async passthrough(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    const order = this.#order();
    return (await this.#first(order, ctx, (t, c) => t.provider.passthrough!(call, c))).value;
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const order = this.#order();
    return (await this.#first(order, ctx, (t, c) => t.provider.chat(req, c))).value;
  }

  async *chatStream(req: CanonicalRequest, ctx: CallContext): AsyncGenerator<CanonicalEvent[]> {
    const order = this.#order();
    const started = await this.#first(order, ctx, startStream(req), true);
    let at = started.at;
    let { events, first: batch } = started.value;
    let renumber: ((events: readonly CanonicalEvent[]) => CanonicalEvent[]) | null = null;
    const partial = new PartialAnswer();
    /** Whether the route serving now has been told how its stream ended. */
    let told = false;
    try {
      for (;;) {
        try {
          for (; !batch.done; batch = await events.next()) {
            const out = renumber ? renumber(batch.value) : batch.value;
            partial.add(out);
            if (out.length > 0) yield out;
          }
          order[at]!.health.completed();
          told = true;
          return;
        } catch (e) {
          const upstreamFault = retryable(e) && !ctx.signal.aborted;
          // A route whose streams break mid-way counts those breaks toward its breaker.
          if (upstreamFault) {
            order[at]!.health.failed(true);
            told = true;
          }
          if (!this.#deps.continueOnFailure || !upstreamFault || !partial.continuable) throw e;
          ctx.fellBack?.(order[at]!.route, e);
          const rest = order.slice(at + 1).filter((t) => t.prefill);
          let next: { at: number; value: Started };
          try {
            next = await this.#first(rest, ctx, startStream(prefilled(req, partial)), true);
          } catch {
            throw e;
          }
          at = order.indexOf(rest[next.at]!);
          told = false;
          ({ events, first: batch } = next.value);
          renumber = continuation(partial);
        }
      }
    } finally {
      if (!told) order[at]!.health.released();
      await events.return?.()?.catch(() => {});
    }
  }

  /** The targets in the order to try them, at most `maxAttempts`. */
  #order(): RouteTarget[] {
    const order = routeOrder(this.#targets, this.#deps.random);
    const max = this.#deps.maxAttempts ?? 4;
    if (order.length > max) order.length = max;
    return order;
  }

  /** The call context of one attempt: the route's upstream model, the dropped params anew. */
  #attempt(ctx: CallContext, route: RouteConfig): CallContext {
    ctx.dropped.clear();
    return { ...ctx, upstreamModel: route.upstream_model };
  }

  /** Runs `call` on `order`'s targets in turn until one answers: its position and answer; the
   * last route's error when none did. A `stream`'s route is told how it went when it ends. */
  async #first<T>(
    order: readonly RouteTarget[],
    ctx: CallContext,
    call: (target: RouteTarget, ctx: CallContext) => Promise<T>,
    stream = false,
  ): Promise<{ at: number; value: T }> {
    let last: unknown = null;
    for (const [at, target] of order.entries()) {
      if (ctx.signal.aborted) break;
      const { route, health } = target;
      health.begin();
      ctx.attempting?.(route);
      const started = performance.now();
      try {
        const value = await call(target, this.#attempt(ctx, route));
        if (stream) health.started(performance.now() - started);
        else health.succeeded(performance.now() - started);
        ctx.served?.(route);
        return { at, value };
      } catch (e) {
        if (!retryable(e) || ctx.signal.aborted) {
          health.ended();
          throw e;
        }
        health.failed();
        if (at < order.length - 1) ctx.fellBack?.(route, e);
        last = e;
      }
    }
    throw last ?? clientClosed();
  }
}

/** Starts a stream of `req` on a target: answered once its first batch came. */
function startStream(req: CanonicalRequest) {
  return async (target: RouteTarget, ctx: CallContext): Promise<Started> => {
    const events = target.provider.chatStream(req, ctx)[Symbol.asyncIterator]();
    try {
      return { events, first: await events.next() };
    } catch (e) {
      await events.return?.()?.catch(() => {});
      throw e;
    }
  };
}
