/**
 * Runs a request through its steps (DESIGN §3): each step is a small function over the
 * request's context that does its part and calls `next` to go on, or answers itself.
 */

/** The rest of the pipeline after a step. */
export type Next<C> = (ctx: C) => Response | Promise<Response>;

/** One step: does its part and calls `next(ctx)` to go on, or answers the request itself. */
export type Step<C> = (ctx: C, next: Next<C>) => Response | Promise<Response>;

/**
 * Links `steps` (outermost first) and then `last` into one function. Hono's compose, except
 * that the chain is linked once, here, instead of per request: each `next` is the following
 * step already bound, so running a request allocates no closures.
 */
export function compose<C>(steps: readonly Step<C>[], last: Next<C>): Next<C> {
  return steps.reduceRight<Next<C>>((next, step) => (ctx) => step(ctx, next), last);
}
