/**
 * The trace step (with OpenTelemetry on): once the route is known, the request's server span
 * (`Tracing.serve`'s) is named after it, `POST /v1/chat/completions`, with `http.route`.
 */
import type { Tracing } from "../telemetry/tracing.ts";
import type { Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";

/** Names each request's server span after its route template. */
export function traceRoute(tracing: Tracing): Step<RequestContext> {
  return (ctx, next) => {
    const route = ctx.endpoint.path;
    if (route !== undefined) tracing.route(ctx.request.method, route);
    return next(ctx);
  };
}
