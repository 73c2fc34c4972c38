/**
 * The outermost step: every response, error or not, carries its request id and the CORS
 * headers; and the endpoint that answers CORS preflights.
 */
import type { Cors } from "../http/cors.ts";
import type { Step } from "./compose.ts";
import type { Endpoint, RequestContext } from "./context.ts";

/** Adds `x-request-id` and the CORS headers of `policy` to the response. */
export function cors(policy: Cors): Step<RequestContext> {
  return async (ctx, next) => {
    const response = await next(ctx);
    const headers = response.headers;
    headers.set("x-request-id", ctx.requestId);
    policy.decorate(ctx.request, headers);
    return response;
  };
}

/** Answers CORS preflights; they reach no route's handler, so they count against the caller's
 * IP in the `other` scope. */
export function preflightEndpoint(policy: Cors): Endpoint {
  return {
    handler: (ctx) => policy.preflight(ctx.request),
    scope: "other",
    auth: "none",
    json: false,
  };
}
