/**
 * One provider's HTTP API called as the gateway calls every upstream: within a deadline,
 * retried before the first byte, its failures mapped to the gateway's errors.
 */
import { ApiError, clientClosed, upstreamError, upstreamTimeout } from "../../errors.ts";
import type { TextPrefix } from "../../http/byte_reader.ts";
import { ContentEncodingRefused } from "../../http/client/content_encoding.ts";
import { TransferEncodingRefused } from "../../http/client/transfer_encoding.ts";
import type { ClientResponse } from "../../http/client/types.ts";
import type { ProviderConfig } from "../../config/types.ts";
import { Expiries } from "../../http/expiries.ts";
import { clip } from "../../quote.ts";
import { sleep } from "../../sleep.ts";
import { type ProviderDeps, secretVariable } from "../types.ts";
import { Deadline } from "./deadline.ts";
import { boundedDetail, NO_DETAIL, redact, type UpstreamErrorDetail } from "./error_detail.ts";
import { mapUpstreamStatus } from "./error_mapping.ts";
import type { UpstreamRequest } from "./request.ts";
import { type LentBytes, UpstreamResponse } from "./response.ts";
import { RetryPolicy, type RetryTiming, shouldRetry } from "./retry.ts";

/** How one upstream style authenticates and writes its error bodies. */
export interface UpstreamStyle {
  /** Headers sent with every call (authentication, API version); the config's extras win. */
  headers: Record<string, string>;
  /** Reads an error body (already parsed as JSON, or the raw text when it was not JSON), with
   * the answer's headers (AWS names the error's type in `x-amzn-ErrorType`). */
  parseError(body: unknown, headers: Headers): UpstreamErrorDetail;
  /** The error for a failure whose meaning the status alone does not carry (Gemini answers a
   * bad key with a 400), or `null` for the table of {@link mapUpstreamStatus}. */
  mapError?(status: number, detail: UpstreamErrorDetail): ApiError | null;
  /** The URL of a call, when it is not `base_url` + its path (Azure's deployments). */
  url?(request: UpstreamRequest): string;
  /** Credentials that expire (Vertex's access tokens), asked for before each attempt. */
  credentials?: UpstreamCredentials;
}

/** Headers that authenticate calls for a while, renewed when the upstream refuses them. */
export interface UpstreamCredentials {
  /** The headers for the next attempt; `refused`: those the upstream just answered 401 to,
   * which must not be given again. Rejects with an ApiError that names no secret. */
  headers(
    signal: AbortSignal,
    refused: Readonly<Record<string, string>> | null,
  ): Promise<Record<string, string>>;
}

/** Bytes of an error body that are read; the rest is not waited for. */
const ERROR_BODY_BYTES = 64 * 1024;

/** Calls one provider's HTTP API: deadline, retries before the first byte, error mapping. */
export class Upstream {
  readonly #deps: ProviderDeps;
  readonly #style: UpstreamStyle;
  readonly #headers: Record<string, string>;
  readonly #retries: RetryPolicy;
  readonly #deadlines: Expiries;

  constructor(deps: ProviderDeps, style: UpstreamStyle, timing: RetryTiming = {}) {
    this.#deps = deps;
    this.#deadlines = new Expiries(Expiries.tickFor(deps.config.timeout_ms));
    this.#style = style;
    this.#headers = {
      ...style.headers,
      ...deps.config.headers,
      "content-type": "application/json",
    };
    this.#retries = new RetryPolicy(deps.config.max_retries, timing);
  }

  /** Calls the upstream and parses its JSON answer; every failure is an ApiError. */
  async json(request: UpstreamRequest): Promise<unknown> {
    const response = await this.call(request);
    try {
      return await response.json();
    } finally {
      response.close();
    }
  }

  /** Sends the request and reads the answer's body's bytes (see {@link json}), in a lent buffer
   * (see {@link LentBytes}). */
  async lend(request: UpstreamRequest): Promise<LentBytes> {
    const response = await this.call(request);
    try {
      return await response.lend();
    } finally {
      response.close();
    }
  }

  /**
   * Sends the request, retrying on connection errors and what {@link shouldRetry} allows (408,
   * 409, 429, 5xx, or as `x-should-retry` says) while no answer has been accepted (bounded by
   * `max_retries` and the deadline, honouring `retry-after`). Resolves with a 2xx answer whose
   * body is still to be read; every failure is an ApiError. A style with expiring
   * {@link UpstreamCredentials} gets one more attempt, with new ones, after a 401.
   */
  async call(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { config } = this.#deps;
    // What the stream's closures below keep (the request's body would live as long as they).
    const { requestId } = request;
    const deadline = new Deadline(this.#deadlines, request.signal, config.timeout_ms);
    const credentials = this.#style.credentials;
    const call = {
      method: request.method,
      url: this.#style.url?.(request) ?? config.base_url + request.path,
      headers: this.#headers,
      signal: deadline.signal,
      ...(request.rawBody !== undefined
        ? { body: request.rawBody }
        : request.body !== undefined
        ? { body: JSON.stringify(request.body) }
        : {}),
    };
    let auth: Record<string, string> | null = null;
    let refused: Record<string, string> | null = null;
    try {
      for (let attempt = 0;; attempt++) {
        if (credentials) {
          try {
            auth = await credentials.headers(deadline.signal, refused);
          } catch (e) {
            throw this.#thrown(e, deadline, "connect", request.requestId);
          }
          call.headers = { ...auth, ...this.#headers };
        }
        let response: ClientResponse;
        try {
          response = await this.#deps.http.request(call);
        } catch (e) {
          const failure = this.#thrown(e, deadline, "connect", request.requestId);
          if (
            failure.status === 502 && refusedCoding(e) === null &&
            await this.#retry(attempt, null, deadline, request)
          ) {
            continue;
          }
          throw failure;
        }
        if (response.status >= 200 && response.status < 300) {
          // A stream's clock runs only while a read waits (see UpstreamResponse.readEvents).
          if (request.stream) deadline.disarm();
          return new UpstreamResponse(response, {
            deadline,
            idleMs: request.stream ? config.timeout_ms : null,
            maxBytes: config.max_response_bytes,
            maxEventBytes: config.max_event_bytes,
            readFailure: (e) => this.#thrown(e, deadline, "read", requestId),
            tooLarge: (what) => this.#tooLarge(what, requestId),
          });
        }
        if (response.status === 401 && credentials && refused === null) {
          // An access token revoked or expired early: one more attempt with a new one.
          response.cancel();
          refused = auth;
          attempt--;
          this.#warn("upstream refused the access token (HTTP 401); renewing it", requestId);
          continue;
        }
        const failure = await this.#failure(response, deadline, request);
        if (failure.retryable && await this.#retry(attempt, response.headers, deadline, request)) {
          continue;
        }
        throw failure.error;
      }
    } catch (e) {
      deadline.close();
      throw e;
    }
  }

  /** Turns a thrown fetch or body-read error into the gateway's error. */
  #thrown(e: unknown, deadline: Deadline, phase: "connect" | "read", requestId: string): ApiError {
    if (e instanceof ApiError) return e;
    if (deadline.clientGone) return clientClosed();
    const id = this.#deps.config.id;
    if (deadline.timedOut) {
      this.#warn(`upstream deadline of ${this.#deps.config.timeout_ms} ms passed`, requestId);
      return upstreamTimeout(
        `The upstream provider "${id}" did not answer within ${this.#deps.config.timeout_ms} ms.`,
      );
    }
    const reason = redact(e instanceof Error ? e.message : String(e), this.#deps.apiKey);
    const refused = refusedCoding(e);
    if (refused !== null) {
      // The upstream answered, in a form the gateway does not read: not a connection failure,
      // and not retried (it would answer the same way).
      this.#warn(`refused the answer: ${reason}`, requestId);
      return new ApiError(
        502,
        "upstream_error",
        `The upstream provider "${id}" answered with ${refused}, which the gateway does not read; the operator must check its configuration.`,
        { code: "upstream_error" },
      );
    }
    if (phase === "connect") {
      this.#warn(`could not connect: ${reason}`, requestId);
      return upstreamError(`Could not reach the upstream provider "${id}".`);
    }
    this.#warn(`the connection broke while reading the answer: ${reason}`, requestId);
    return upstreamError(
      `The connection to the upstream provider "${id}" broke while reading its answer.`,
    );
  }

  /** The 502 for an answer (a JSON body, or a whole stream) over `max_response_bytes`, or a
   * stream event over `max_event_bytes`; the caller cuts the call. */
  #tooLarge(what: "answer" | "event", requestId: string): ApiError {
    const { id, max_response_bytes, max_event_bytes } = this.#deps.config;
    const [limit, field, sent] = what === "event"
      ? [max_event_bytes, "max_event_bytes", "a stream event"]
      : [max_response_bytes, "max_response_bytes", "an answer"];
    this.#warn(`${sent} over ${field} (${limit} bytes); the call was cut`, requestId);
    return upstreamError(
      `The upstream provider "${id}" sent ${sent} larger than the gateway accepts (${limit} bytes).`,
    );
  }

  /** Reads (its first 64 KiB at most) and maps a non-2xx answer. */
  async #failure(
    response: ClientResponse,
    deadline: Deadline,
    request: UpstreamRequest,
  ): Promise<{ error: ApiError; retryable: boolean }> {
    let read: TextPrefix;
    try {
      read = await response.text(ERROR_BODY_BYTES);
    } catch (e) {
      const error = this.#thrown(e, deadline, "read", request.requestId);
      return { error, retryable: error.status === 502 };
    }
    let body: unknown = read.text;
    try {
      body = JSON.parse(read.text);
    } catch {
      // Not JSON (a proxy's HTML page, or cut at 64 KiB): parseError gets the text.
    }
    const parsed = typeof body === "string" && body.trim() === ""
      ? NO_DETAIL
      : this.#style.parseError(body, response.headers);
    const detail = boundedDetail(parsed, this.#deps.apiKey);
    const status = response.status;
    const error = this.#style.mapError?.(status, detail) ?? mapUpstreamStatus(
      this.#deps.config.id,
      status,
      detail,
      response.headers,
      this.#deps.clock.now(),
      request.model,
    );
    const quota = detail.code === "insufficient_quota" || detail.type === "insufficient_quota";
    const retryable = !quota && shouldRetry(status, response.headers);
    // The status and the upstream's own type and code; its message (which may quote the
    // caller's content) only when the operator logs content.
    const code = detail.code === detail.type ? null : detail.code;
    const kind = [status, detail.type, code].filter((k) => k !== null).join(" ");
    const what = status === 401 || status === 403
      ? `upstream refused the API key (HTTP ${kind}); check ${
        credentialVariables(this.#deps.config)
      }`
      : `upstream answered HTTP ${kind}${
        this.#deps.includeContent && detail.message ? `: ${detail.message}` : ""
      }`;
    this.#warn(what, request.requestId);
    return { error, retryable };
  }

  /** Waits before the next attempt if one is allowed and fits the deadline. */
  async #retry(
    attempt: number,
    headers: Headers | null,
    deadline: Deadline,
    request: UpstreamRequest,
  ): Promise<boolean> {
    const wait = this.#retries.wait(attempt, headers, this.#deps.clock.now(), deadline.remaining());
    if (wait === null) return false;
    this.#warn(
      `retrying in ${Math.round(wait)} ms (retry ${
        attempt + 1
      } of ${this.#deps.config.max_retries})`,
      request.requestId,
    );
    // An abort ends the wait early (sleep rejects with its reason), reported just below.
    await sleep(wait, deadline.signal).catch(() => {});
    if (deadline.signal.aborted) {
      throw this.#thrown(deadline.signal.reason, deadline, "connect", request.requestId);
    }
    return true;
  }

  #warn(message: string, requestId: string): void {
    this.#deps.logger.warn(`provider "${this.#deps.config.id}" (${requestId}): ${message}`);
  }
}

/** Where a provider's credentials come from, for a warning about their refusal. */
function credentialVariables(config: ProviderConfig): string {
  const aws = config.bedrock;
  if (aws !== undefined && config.api_key_env === null) {
    return `${aws.access_key_id_env}, ${aws.secret_access_key_env} and ${aws.session_token_env}`;
  }
  return secretVariable(config) ?? "the provider's headers";
}

/** The coding of an answer the client refused (`Content-Encoding gzip`, `Transfer-Encoding
 * gzip, chunked`), or `null` when `e` is no such refusal. */
function refusedCoding(e: unknown): string | null {
  if (e instanceof ContentEncodingRefused) return `Content-Encoding ${e.encoding}`;
  if (e instanceof TransferEncodingRefused) return `Transfer-Encoding ${clip(e.coding)}`;
  return null;
}
