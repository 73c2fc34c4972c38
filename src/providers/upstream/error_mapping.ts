/**
 * An upstream's failure as the gateway's error (DESIGN §6, §7): the status and error body of an
 * answer refused before its first byte, or the error an upstream reported inside a stream.
 */
import { ApiError, upstreamError, upstreamOverloaded, upstreamTimeout } from "../../errors.ts";
import { boundedDetail, rewriteModel, type UpstreamErrorDetail } from "./error_detail.ts";
import { rateLimitRetryAfter, retryAfterMs, wholeSeconds } from "./retry_after.ts";

/**
 * Maps an upstream error response to the gateway's error (DESIGN §6, §7), whatever the
 * upstream's style: 429 stays 429, always with a `retry-after` (see `retry_after.ts`); a
 * request the upstream rejected stays 400 (413) with the upstream's message and a string code
 * (the upstream's code, else its error type, else `upstream_invalid_request`); the upstream
 * refusing our credentials or not knowing the model is our fault (502, no upstream text); an
 * overloaded upstream (529) is a 503 `upstream_overloaded` (529 `overloaded_error` on the
 * Messages front door); the upstream's own gateway timeout (504) a 504 `upstream_timeout`;
 * everything else is a 502 `upstream_error`.
 */
export function mapUpstreamStatus(
  provider: string,
  status: number,
  detail: UpstreamErrorDetail,
  headers: Headers,
  now: number,
  model?: { id: string; upstream: string },
): ApiError {
  const said = detail.message === null ? null : rewriteModel(detail.message, model);
  if (status === 400 || status === 422 || status === 413) {
    const message = said ?? `The upstream provider rejected the request (HTTP ${status}).`;
    if (status === 413) {
      return new ApiError(413, "invalid_request_error", message, { code: "request_too_large" });
    }
    return new ApiError(400, "invalid_request_error", message, {
      code: detail.code ?? detail.type ?? "upstream_invalid_request",
      param: detail.param,
    });
  }
  if (status === 429) {
    const quota = detail.code === "insufficient_quota" || detail.type === "insufficient_quota";
    return new ApiError(
      429,
      "rate_limit_error",
      quota
        ? `The upstream provider "${provider}" has no quota left for this gateway; try again later or another model.`
        : `The upstream provider "${provider}" is rate limiting requests; retry after a short wait.`,
      {
        code: quota ? "insufficient_quota" : "rate_limit_exceeded",
        ...(quota ? {} : { headers: { "retry-after": rateLimitRetryAfter(headers, now) } }),
      },
    );
  }
  if (status === 401 || status === 403) return credentialsRefused(provider, status);
  if (status === 404) {
    return upstreamError(
      `The upstream provider "${provider}" does not know the configured model or path (HTTP 404); the operator must check its configuration.`,
    );
  }
  const kind = detail.type ?? detail.code;
  const what = `HTTP ${status}${kind ? ` ${kind}` : ""}`;
  if (status === 529) {
    const wait = retryAfterMs(headers, now);
    return upstreamOverloaded(
      `The upstream provider "${provider}" is overloaded (${what}); retry after a short wait.`,
      wait === null ? undefined : { "retry-after": wholeSeconds(wait) },
    );
  }
  if (status === 504) {
    return upstreamTimeout(
      `The upstream provider "${provider}" did not answer within its own deadline (${what}).`,
    );
  }
  return upstreamError(`The upstream provider "${provider}" failed (${what}).`);
}

/**
 * The 502 of an upstream that refused the gateway's credentials (HTTP 401 or 403): the
 * operator's to fix, no upstream text. `credential` names what the provider authenticates
 * with, for the operator to check ("its API key"; Vertex's service account, Azure's Entra
 * token).
 */
export function credentialsRefused(
  provider: string,
  status: number,
  credential = "its API key",
): ApiError {
  return upstreamError(
    `The upstream provider "${provider}" refused the gateway's credentials (HTTP ${status}); the operator must check ${credential}.`,
  );
}

/** The error an upstream reported inside a stream that had already begun; the upstream's
 * detail is {@link boundedDetail bounded} (`secret`, the provider's key, removed). */
export function mapStreamError(
  provider: string,
  reported: UpstreamErrorDetail,
  secret: string | null,
): ApiError {
  const detail = boundedDetail(reported, secret);
  const said = detail.message ? `: ${detail.message}` : "";
  if (detail.type === "rate_limit_error" || detail.code === "rate_limit_exceeded") {
    return new ApiError(
      429,
      "rate_limit_error",
      `The upstream provider "${provider}" is rate limiting requests${said}`,
      { code: "rate_limit_exceeded" },
    );
  }
  return upstreamError(
    `The upstream provider "${provider}" failed mid-stream (${detail.type ?? "error"})${said}`,
  );
}
