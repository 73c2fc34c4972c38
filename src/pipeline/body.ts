/**
 * The body step: for a request with a body, a signal that also fires when the client leaves
 * after sending it (Deno's own misses that: see `http/disconnect_watch.ts`); for endpoints that
 * take one, the JSON object body, read within the size and time limits (413, 408; 499 for an
 * abandoned upload). Parsing it into a request is the front door's.
 */
import { type BodyLimits, readJsonObject } from "../http/body.ts";
import type { DisconnectWatch } from "../http/disconnect_watch.ts";
import type { Expiries } from "../http/expiries.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";

/** Watches `disconnects` while a request with a body is handled; reads JSON within `limits`
 * (the time limit watched by `timers`). */
export function body(
  disconnects: Pick<DisconnectWatch, "watch">,
  limits: BodyLimits,
  timers: Expiries,
): Step<RequestContext> {
  return (ctx, next) => {
    // Only requests that may have a body pay for the abort controller and the watch (by
    // method: `request.body !== null` would make the body's stream, which costs more).
    const { method } = ctx.request;
    if (method !== "GET" && method !== "HEAD") {
      return watched(ctx, next, disconnects, limits, timers);
    }
    return ctx.endpoint.json ? read(ctx, next, limits, timers) : next(ctx);
  };
}

async function watched(
  ctx: RequestContext,
  next: Next<RequestContext>,
  disconnects: Pick<DisconnectWatch, "watch">,
  limits: BodyLimits,
  timers: Expiries,
): Promise<Response> {
  // One controller fed by both sources: `AbortSignal.any` cost ~10 µs a request.
  const left = new AbortController();
  const abort = () => left.abort();
  // The request's own signal, or the admit step's that also stops a refused request's work.
  const { signal } = ctx;
  if (signal.aborted) abort();
  else signal.addEventListener("abort", abort, { once: true });
  ctx.signal = left.signal;
  const unwatch = disconnects.watch(ctx.remote, abort);
  try {
    return ctx.endpoint.json ? await read(ctx, next, limits, timers) : await next(ctx);
  } finally {
    unwatch();
  }
}

/** A request without a body still gets the body's 400 (no Content-Type, or empty). */
async function read(
  ctx: RequestContext,
  next: Next<RequestContext>,
  limits: BodyLimits,
  timers: Expiries,
): Promise<Response> {
  ctx.body = await readJsonObject(ctx.request, limits, timers);
  return await next(ctx);
}
