import { clip, clipMiddle } from "./quote.ts";

/** The spec's error body (spec §2.9, §7; DESIGN §7): OpenAI's convention. */
export interface ErrorBody {
  error: {
    message: string;
    type: string;
    code: string | null;
    param: string | null;
  };
}

/** Anthropic's error body (the Messages API's front door answers in it). */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
  request_id?: string;
}

/** Google's error body (the Gemini front door answers in it): the HTTP status, the message,
 * and the canonical gRPC status name (`INVALID_ARGUMENT`, `NOT_FOUND`...). */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}

/** Which protocol's error shape a front door answers in. */
export type ErrorStyle = "openai" | "anthropic" | "gemini";

/** Google's status name for each HTTP status its APIs answer; other statuses map by class. */
const GEMINI_STATUSES: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  408: "DEADLINE_EXCEEDED",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Anthropic's error type for each status it documents; other statuses map by class. */
const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** Options for an {@link ApiError} beyond status, type and message. */
export interface ApiErrorOptions {
  code?: string | null;
  param?: string | null;
  headers?: HeadersInit;
  /** The status the Messages front door answers with, when Anthropic's differs (529). */
  anthropicStatus?: number;
}

/** Characters of an error message at most: messages quote callers' values in short excerpts
 * (see quote.ts); this bounds any message whatever it quotes. */
const MESSAGE_CHARS = 2000;
/** Characters of a `param` at most (a path can hold a caller's object keys): its start and its
 * end, which names the field. */
const PARAM_CHARS = 301;

/** An error that is answered to the client as a JSON error body with its status. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: HeadersInit | undefined;
  /** The status in Anthropic's protocol (the Messages front door's): `status` unless told. */
  readonly anthropicStatus: number;

  constructor(status: number, type: string, message: string, options: ApiErrorOptions = {}) {
    super(clip(message, MESSAGE_CHARS));
    this.name = "ApiError";
    this.status = status;
    this.type = type;
    this.code = options.code ?? null;
    this.param = options.param === undefined || options.param === null
      ? null
      : clipMiddle(options.param, PARAM_CHARS);
    this.headers = options.headers;
    this.anthropicStatus = options.anthropicStatus ?? status;
  }

  /** This error as a front door of `style` answers it: itself, or with the protocol's own
   * status where that differs (an overloaded upstream is Anthropic's 529). */
  inStyle(style: ErrorStyle): ApiError {
    if (style !== "anthropic" || this.anthropicStatus === this.status) return this;
    return new ApiError(this.anthropicStatus, this.type, this.message, {
      code: this.code,
      param: this.param,
      ...(this.headers !== undefined ? { headers: this.headers } : {}),
    });
  }

  /** The JSON body for this error. */
  toBody(): ErrorBody {
    return {
      error: { message: this.message, type: this.type, code: this.code, param: this.param },
    };
  }

  /** What is wrong, for a message that names the field before it (the whole message here; a
   * validation error's leaves out the field it names itself). */
  protected reasonAlone(): string {
    return this.message;
  }

  /** The error in Anthropic's shape: its type by (Anthropic's) status, and the field's path
   * (dotted, as Anthropic writes it: `messages.0.content`) leading the message. */
  toAnthropicBody(requestId?: string): AnthropicErrorBody {
    const status = this.anthropicStatus;
    const type = ANTHROPIC_TYPES[status] ??
      (status === 503 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error");
    const path = this.param?.replace(/\[(\d+)\]/g, ".$1");
    const message = path ? `${path}: ${this.reasonAlone()}` : this.message;
    const body: AnthropicErrorBody = { type: "error", error: { type, message } };
    if (requestId !== undefined) body.request_id = requestId;
    return body;
  }

  /** The error in Google's shape: the status, the message led by the field's path as the
   * Anthropic shape has it, and the status's gRPC name (`INVALID_ARGUMENT`). */
  toGeminiBody(): GeminiErrorBody {
    const { status } = this;
    const name = GEMINI_STATUSES[status] ??
      (status >= 500 ? (status === 502 ? "UNAVAILABLE" : "INTERNAL") : "FAILED_PRECONDITION");
    const message = this.param ? `${this.param}: ${this.reasonAlone()}` : this.message;
    return { error: { code: status, message, status: name } };
  }
}

/** 400 `invalid_request_error`; `param` names the offending field, `code` says what is wrong
 * (`invalid_value` unless given: every error carries a string code, DESIGN §7). */
export function invalidRequest(
  message: string,
  param: string | null = null,
  code = "invalid_value",
): ApiError {
  return new ApiError(400, "invalid_request_error", message, { param, code });
}

/** 404 `model_not_found`. */
export function modelNotFound(model: string, param = "model"): ApiError {
  return new ApiError(
    404,
    "invalid_request_error",
    `The model \`${clip(model)}\` does not exist or you do not have access to it.`,
    { code: "model_not_found", param },
  );
}

/** 400 `unsupported_capability`. */
export function unsupportedCapability(message: string, param: string | null = null): ApiError {
  return new ApiError(400, "invalid_request_error", message, {
    code: "unsupported_capability",
    param,
  });
}

/** 401 `invalid_api_key`. */
export function unauthorized(message: string): ApiError {
  return new ApiError(401, "authentication_error", message, { code: "invalid_api_key" });
}

/** 403 `model_not_permitted`. */
export function forbidden(message: string, param: string | null = "model"): ApiError {
  return new ApiError(403, "permission_error", message, { code: "model_not_permitted", param });
}

/** 404 for an unknown route. */
export function pathNotFound(method: string, path: string): ApiError {
  return new ApiError(
    404,
    "invalid_request_error",
    `Unknown request URL: ${clip(method, 20)} ${clip(path)}.`,
    {
      code: "unknown_url",
    },
  );
}

/** 405 with the `Allow` header. */
export function methodNotAllowed(method: string, path: string, allow: readonly string[]): ApiError {
  return new ApiError(
    405,
    "invalid_request_error",
    `Method ${clip(method, 20)} is not allowed on ${clip(path)}; allowed: ${allow.join(", ")}.`,
    { code: "method_not_allowed", headers: { allow: allow.join(", ") } },
  );
}

/** 413 for a body over the configured limit. */
export function payloadTooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    "invalid_request_error",
    `Request body is larger than the limit of ${limit} bytes.`,
    { code: "request_too_large" },
  );
}

/** 408 `request_timeout`: the request body did not arrive in time. (Deno's server says
 * `Connection: close` itself, since the body was not read to its end.) */
export function requestTimeout(ms: number): ApiError {
  return new ApiError(
    408,
    "invalid_request_error",
    `The request body did not arrive within ${ms} ms.`,
    { code: "request_timeout" },
  );
}

/** 499: the client went away; nobody will read this error, but the request's log shows it. */
export function clientClosed(): ApiError {
  return new ApiError(499, "invalid_request_error", "The client closed the request.", {
    code: "client_disconnected",
  });
}

/** 429 `rate_limit_exceeded`. */
export function rateLimited(message: string, headers: HeadersInit): ApiError {
  return new ApiError(429, "rate_limit_error", message, { code: "rate_limit_exceeded", headers });
}

/** 500 with a generic message: the details go to stderr only. */
export function internalError(requestId: string): ApiError {
  return new ApiError(
    500,
    "server_error",
    `The server had an error while processing your request (request id ${requestId}).`,
    { code: "internal_error" },
  );
}

/** 503 `service_unavailable`: the gateway cannot decide the request now (its store fails). */
export function serviceUnavailable(message: string): ApiError {
  return new ApiError(503, "server_error", message, {
    code: "service_unavailable",
    headers: { "retry-after": "5" },
  });
}

/** 502 `upstream_error`: the upstream failed or answered garbage. */
export function upstreamError(message: string): ApiError {
  return new ApiError(502, "upstream_error", message, { code: "upstream_error" });
}

/** 503 `upstream_overloaded`: the upstream is overloaded (its 529); the Messages front door
 * answers it as Anthropic does, 529 `overloaded_error`. */
export function upstreamOverloaded(message: string, headers?: HeadersInit): ApiError {
  return new ApiError(503, "upstream_error", message, {
    code: "upstream_overloaded",
    anthropicStatus: 529,
    ...(headers !== undefined ? { headers } : {}),
  });
}

/** 504 `upstream_timeout`: the upstream did not answer in time. */
export function upstreamTimeout(message: string): ApiError {
  return new ApiError(504, "upstream_error", message, { code: "upstream_timeout" });
}
