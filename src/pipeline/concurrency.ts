/**
 * The concurrency step: a request of a key with `max_concurrent` holds one of its slots (a
 * lease, see limits/leases.ts) from admission until it settles; with every slot held it is a
 * 429 at once. Its settle hook gives the slot back.
 */
import type { ConcurrencyLeases } from "../limits/leases.ts";
import type { Logger } from "../log/logger.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";
import type { SettleHook } from "./settle.ts";
import type { StoreGuard } from "./store_guard.ts";

/** Holds a slot of capped keys' limited requests in `leases`. */
export function concurrency(leases: ConcurrencyLeases, store: StoreGuard): Step<RequestContext> {
  return (ctx, next) => {
    const { principal } = ctx;
    if (ctx.endpoint.scope === null || principal.kind !== "key") return next(ctx);
    const max = principal.key.max_concurrent;
    if (max === undefined || max === null) return next(ctx);
    return held(ctx, next, leases, store, principal.key.id, max);
  };
}

async function held(
  ctx: RequestContext,
  next: Next<RequestContext>,
  leases: ConcurrencyLeases,
  store: StoreGuard,
  keyId: string,
  max: number,
): Promise<Response> {
  store.check();
  try {
    ctx.lease = await leases.acquire(keyId, max);
  } catch (e) {
    throw store.failure(e, ctx);
  }
  return await next(ctx);
}

/** The settle hook: the request's slot, if it held one, is free again. */
export function releaseSlot(leases: ConcurrencyLeases, logger: Logger): SettleHook {
  return (ctx) => {
    if (ctx.lease === null) return;
    leases.release(ctx.lease).catch((e) =>
      logger.error("could not release a concurrency slot (it expires on its own)", e, ctx.requestId)
    );
  };
}
