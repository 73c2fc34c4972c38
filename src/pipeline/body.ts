/**
 * The body step: for endpoints that take one, the JSON object body, read within the size and time
 * limits (413, 408; 499 for an abandoned upload). Parsing it into a request is the front door's.
 * A client that leaves after sending its body is noticed by the server (`http/server/`), which
 * aborts the request's signal.
 */
import { type BodyLimits, readJsonBody } from "../http/body.ts";
import type { Expiries } from "../http/expiries.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";

/** Reads JSON within `limits` (the time limit watched by `timers`). */
export function body(limits: BodyLimits, timers: Expiries): Step<RequestContext> {
  return (ctx, next) => ctx.endpoint.json ? read(ctx, next, limits, timers) : next(ctx);
}
/** A request without a body still gets the body's 400 (no Content-Type, or empty). */
async function read(
  ctx: RequestContext,
  next: Next<RequestContext>,
  limits: BodyLimits,
  timers: Expiries,
): Promise<Response> {
  const { value, bytes } = await readJsonBody(ctx.request, limits, timers);
  ctx.body = value;
  ctx.bodyBytes = bytes;
  return await next(ctx);
}
