/**
 * A model with several routes as one provider (DESIGN §6.3): each call tries the routes in
 * `routeOrder`'s order and moves to the next on a failure that is not the caller's fault (an
 * upstream 429, 5xx, 529, timeout, connection failure or refused credentials: what adapters
 * report as 429 or 5xx) before the first byte; a caller's error (400) is not retried. A stream
 * that failed after its first event ends as any stream does (the front door's error event).
 * The route that served is reported through the call context's `served`.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import type { RouteConfig } from "../config.ts";
import { ApiError, clientClosed } from "../errors.ts";
import type { CallContext, Provider } from "../providers/types.ts";
import type { RouteHealth } from "./health.ts";
import { routeOrder } from "./select.ts";

/** A route and the adapter of its provider. */
export interface RouteTarget {
  route: RouteConfig;
  provider: Provider;
}

/** What a routed provider needs besides its routes. */
export interface RoutingDeps {
  health: RouteHealth;
  random: () => number;
  /** Routes tried per request at most (default 4). */
  maxAttempts?: number;
}

/** Whether a failure may be the route's, so that another route may succeed. */
export function retryable(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 429 || error.status >= 500);
}

/** Tries a model's routes in order until one answers (see the module doc). */
export class RoutedProvider implements Provider {
  readonly id: string;
  readonly #model: string;
  readonly #targets: readonly RouteTarget[];
  readonly #deps: RoutingDeps;
  /** Moderation and image generation go to the first route, without fallback. */
  readonly moderate?: NonNullable<Provider["moderate"]>;
  readonly generateImages?: NonNullable<Provider["generateImages"]>;

  constructor(model: string, targets: readonly RouteTarget[], deps: RoutingDeps) {
    this.id = `routes:${model}`;
    this.#model = model;
    this.#targets = targets;
    this.#deps = deps;
    const { route, provider } = targets[0]!;
    const moderate = provider.moderate?.bind(provider);
    if (moderate) this.moderate = (req, ctx) => moderate(req, this.#attempt(ctx, route));
    const generate = provider.generateImages?.bind(provider);
    if (generate) this.generateImages = (req, ctx) => generate(req, this.#attempt(ctx, route));
  }

  /** The targets in the order to try them, at most `maxAttempts`. */
  #order(): RouteTarget[] {
    const routes = routeOrder(
      this.#model,
      this.#targets.map((t) => t.route),
      this.#deps.health,
      this.#deps.random,
    );
    return routes.slice(0, this.#deps.maxAttempts ?? 4)
      .map((route) => this.#targets.find((t) => t.route === route)!);
  }

  /** The call context of one attempt: the route's upstream model, the dropped params anew. */
  #attempt(ctx: CallContext, route: RouteConfig): CallContext {
    ctx.dropped.clear();
    return { ...ctx, upstreamModel: route.upstream_model };
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const { health } = this.#deps;
    let last: unknown = null;
    for (const { route, provider } of this.#order()) {
      if (ctx.signal.aborted) break;
      health.begin(this.#model, route);
      const started = performance.now();
      try {
        const result = await provider.chat(req, this.#attempt(ctx, route));
        health.succeeded(this.#model, route, performance.now() - started);
        ctx.served?.(route);
        return result;
      } catch (e) {
        if (!retryable(e) || ctx.signal.aborted) {
          health.ended(this.#model, route);
          throw e;
        }
        health.failed(this.#model, route);
        last = e;
      }
    }
    throw last ?? clientClosed();
  }

  async *chatStream(req: CanonicalRequest, ctx: CallContext): AsyncGenerator<CanonicalEvent[]> {
    const { health } = this.#deps;
    let last: unknown = null;
    for (const { route, provider } of this.#order()) {
      if (ctx.signal.aborted) break;
      health.begin(this.#model, route);
      const started = performance.now();
      const events = provider.chatStream(req, this.#attempt(ctx, route))[Symbol.asyncIterator]();
      let first: IteratorResult<CanonicalEvent[]>;
      try {
        first = await events.next();
      } catch (e) {
        if (!retryable(e) || ctx.signal.aborted) {
          health.ended(this.#model, route);
          throw e;
        }
        health.failed(this.#model, route);
        last = e;
        continue;
      }
      health.succeeded(this.#model, route, performance.now() - started);
      ctx.served?.(route);
      try {
        for (let next = first; !next.done; next = await events.next()) yield next.value;
      } finally {
        await events.return?.();
      }
      return;
    }
    throw last ?? clientClosed();
  }
}
