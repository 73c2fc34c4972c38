/**
 * The admit step: the request counts against its endpoint's limit scope (DESIGN §8), as its
 * caller (a key, or the client's IP); over a limit it is a 429 that reaches no handler and
 * reads no body. A store that fails makes the limits undecidable: 503.
 */
import type { Clock } from "../clock.ts";
import type { LimitScope } from "../config.ts";
import type { RateLimiter } from "../limits/limiter.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";
import type { StoreGuard } from "./store_guard.ts";

/** Admits requests of limited endpoints through `limiter`. */
export function admit(limiter: RateLimiter, store: StoreGuard, clock: Clock): Step<RequestContext> {
  return (ctx, next) => {
    const scope = ctx.endpoint.scope;
    return scope === null ? next(ctx) : admitted(ctx, next, scope, limiter, store, clock);
  };
}

async function admitted(
  ctx: RequestContext,
  next: Next<RequestContext>,
  scope: LimitScope,
  limiter: RateLimiter,
  store: StoreGuard,
  clock: Clock,
): Promise<Response> {
  store.check();
  try {
    const admission = await limiter.admit(scope, ctx.caller, ctx.ip);
    ctx.principal = admission.principal;
    ctx.window = admission.window;
    ctx.admittedAt = clock.now();
  } catch (e) {
    throw store.failure(e, ctx);
  }
  return await next(ctx);
}
