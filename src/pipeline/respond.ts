/**
 * The response as the client gets it: a thrown error answered as its JSON error body in the
 * endpoint's protocol's shape (an
 * unexpected one as a 500 that names only the request id), with the rate-limit headers of the
 * window the request was admitted in.
 */
import { authenticatesAsGoogle } from "../auth/authenticate.ts";
import { ApiError, type ErrorStyle, internalError } from "../errors.ts";
import { errorResponse } from "../http/response.ts";
import { setTokenHeaders } from "../limits/tokens.ts";
import { setRateLimitHeaders } from "../limits/windows.ts";
import type { Logger } from "../log/logger.ts";
import { truncateText } from "../log/record.ts";
import type { Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";

/** Answers errors of the steps after it and adds the rate-limit headers. */
export function respond(logger: Logger): Step<RequestContext> {
  return async (ctx, next) => {
    let response: Response;
    try {
      response = await next(ctx);
    } catch (e) {
      const error = e instanceof ApiError ? e : unexpected(ctx, e, logger);
      ctx.error = error.code ?? error.type;
      response = errorResponse(error, errorStyle(ctx), ctx.requestId);
    }
    if (ctx.window) setRateLimitHeaders(response.headers, ctx.window, ctx.admittedAt);
    if (ctx.route) response.headers.set("x-switchyard-route", ctx.route);
    if (ctx.tokenWindow) setTokenHeaders(response.headers, ctx.tokenWindow, ctx.admittedAt);
    return response;
  };
}

/** The shape the request's errors are answered in. */
function errorStyle(ctx: RequestContext): ErrorStyle {
  const style = ctx.endpoint?.errors ?? "openai";
  if (style !== "versioned") return style;
  const { request } = ctx;
  if (request.headers.has("anthropic-version")) return "anthropic";
  return authenticatesAsGoogle(request) ? "gemini" : "openai";
}

/** A bug: written to stderr (its path bounded as in the request log), answered as a 500 without
 * its details. */
function unexpected(ctx: RequestContext, e: unknown, logger: Logger): ApiError {
  const where = `${truncateText(ctx.request.method, 32)} ${truncateText(ctx.url.pathname, 256)}`;
  logger.error(`unhandled error in ${where}`, e, ctx.requestId);
  return internalError(ctx.requestId);
}
