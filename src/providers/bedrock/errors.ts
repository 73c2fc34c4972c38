/**
 * Bedrock's errors as the gateway's: the JSON error answers (`x-amzn-ErrorType` or `__type`
 * naming the exception, `message`) and the exception messages of an event stream.
 */
import { type ApiError, upstreamError, upstreamOverloaded, upstreamTimeout } from "../../errors.ts";
import type { UpstreamErrorDetail } from "../upstream/error_detail.ts";
import { mapStreamError } from "../upstream/error_mapping.ts";
import { isObject } from "../wire.ts";

/** The exceptions that say the gateway's AWS credentials or their rights are wrong. */
const CREDENTIAL_ERRORS = new Set([
  "AccessDeniedException",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "IncompleteSignatureException",
  "ExpiredTokenException",
  "MissingAuthenticationTokenException",
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
]);

/** An exception's name from `x-amzn-ErrorType` or `__type`: `ValidationException:http://...`
 * and `com.amazon.coral#ValidationException` both name `ValidationException`. */
function exceptionName(raw: string): string {
  return raw.split(":")[0]!.split("#").at(-1)!;
}

/** Reads a Bedrock error answer: the exception's name as type and code, its message. */
export function parseBedrockError(body: unknown, headers?: Headers): UpstreamErrorDetail {
  const detail: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };
  const named = headers?.get("x-amzn-errortype") ??
    (isObject(body) && typeof body.__type === "string" ? body.__type : null);
  if (named) detail.type = detail.code = exceptionName(named);
  if (isObject(body)) {
    const message = body.message ?? body.Message;
    if (typeof message === "string") detail.message = message;
  }
  return detail;
}

/**
 * The errors Bedrock's status alone does not say (the rest follow the common table): the
 * credentials refused (AccessDenied, UnrecognizedClient, InvalidSignature, ExpiredToken...)
 * are the operator's to fix, a 502 naming the provider and never the keys; a model that is
 * not ready (its 429 `ModelNotReadyException`) or a service unavailable is a 503; the model's
 * own timeout (`ModelTimeoutException`, 408) a 504.
 */
export function mapBedrockError(
  provider: string,
  status: number,
  detail: UpstreamErrorDetail,
): ApiError | null {
  const name = detail.type ?? "";
  if (CREDENTIAL_ERRORS.has(name) || status === 401 || status === 403) {
    return upstreamError(
      `The upstream provider "${provider}" refused the gateway's AWS credentials (HTTP ${status}${
        name ? ` ${name}` : ""
      }); the operator must check its AWS keys (or Bedrock API key) and their permissions.`,
    );
  }
  if (name === "ModelNotReadyException" || name === "ServiceUnavailableException") {
    return upstreamOverloaded(
      `The upstream provider "${provider}" cannot serve the model now (HTTP ${status} ${name}); retry after a short wait.`,
    );
  }
  if (name === "ModelTimeoutException" || status === 408) {
    return upstreamTimeout(
      `The upstream provider "${provider}" did not answer within its own deadline (HTTP ${status}${
        name ? ` ${name}` : ""
      }).`,
    );
  }
  return null;
}

/** The error an event stream's exception message (`:exception-type`, a JSON payload with
 * `message`) reported after the answer began: throttling as a 429, the rest a 502. */
export function mapBedrockStreamException(
  provider: string,
  exceptionType: string,
  payload: unknown,
): ApiError {
  const detail = parseBedrockError(payload);
  const type = exceptionType.charAt(0).toUpperCase() + exceptionType.slice(1);
  detail.type = type;
  detail.code = type === "ThrottlingException" ? "rate_limit_exceeded" : type;
  return mapStreamError(provider, detail, null);
}
