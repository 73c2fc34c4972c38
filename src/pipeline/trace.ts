/**
 * The trace step (with OpenTelemetry on): once the endpoint is known, the request's server span
 * (`Tracing.serve`'s) is named after it, `POST /v1/chat/completions`, with `http.route`.
 */
import type { Tracing } from "../telemetry/tracing.ts";
import type { Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";

/** Names each request's server span after its path template. */
export function traceRequest(tracing: Tracing): Step<RequestContext> {
  return (ctx, next) => {
    const path = ctx.endpoint.path;
    if (path !== undefined) tracing.route(ctx.request.method, path);
    return next(ctx);
  };
}
