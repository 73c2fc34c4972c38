import { ContentEncodingRefused } from "../http/client/content_encoding.ts";
import {
  ApiError,
  clientClosed,
  upstreamError,
  upstreamOverloaded,
  upstreamTimeout,
} from "../errors.ts";
import { clip } from "../quote.ts";
import type { TextPrefix } from "../http/byte_reader.ts";
import type { ClientResponse } from "../http/client/types.ts";
import { Expiries, type Expiry } from "../http/expiries.ts";
import { SseDecoder, type SseEvent, SseEventTooLarge } from "../http/sse.ts";
import { rateLimitRetryAfter, retryAfterMs, wholeSeconds } from "./upstream/retry_after.ts";
import type { CallContext, ProviderDeps } from "./types.ts";

/** What an upstream's error body said; fields it did not carry are `null`. */
export interface UpstreamErrorDetail {
  message: string | null;
  type: string | null;
  code: string | null;
  param: string | null;
}

/** How one upstream style authenticates and writes its error bodies. */
export interface UpstreamStyle {
  /** Headers sent with every call (authentication, API version); the config's extras win. */
  headers: Record<string, string>;
  /** Reads an error body (already parsed as JSON, or the raw text when it was not JSON). */
  parseError(body: unknown): UpstreamErrorDetail;
  /** The error for a failure whose meaning the status alone does not carry (Gemini answers a
   * bad key with a 400), or `null` for the table of {@link mapUpstreamStatus}. */
  mapError?(status: number, detail: UpstreamErrorDetail): ApiError | null;
}

/** Retry timing; the defaults suit production, tests shorten them. */
export interface RetryTiming {
  /** Wait before the first retry when the upstream gave no `retry-after`; doubled per retry. */
  initialBackoffMs?: number;
  /** Upper bound of the exponential backoff. */
  maxBackoffMs?: number;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

/** One call to an upstream. */
export interface UpstreamRequest {
  method: "GET" | "POST";
  /** Appended to the provider's `base_url`, e.g. `/chat/completions`. */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** The client's signal: when it fires, the upstream call is aborted. */
  signal: AbortSignal;
  requestId: string;
  /** A streamed body: after the headers, the deadline runs only while a read waits for the
   * upstream, from the start each time. */
  stream?: boolean;
  /** Model ids for rewriting the upstream's error messages (upstream -> gateway id). */
  model?: { id: string; upstream: string };
}

/** The `POST` of a model call (chat, moderation, images): the caller's signal and request id,
 * and the model ids. */
export function chatPost(
  ctx: CallContext,
  path: string,
  body: unknown,
  stream: boolean,
): UpstreamRequest {
  return {
    method: "POST",
    path,
    body,
    signal: ctx.signal,
    requestId: ctx.requestId,
    stream,
    model: { id: ctx.model.id, upstream: ctx.upstreamModel },
  };
}

const NO_DETAIL: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };

/** Bytes of an error body that are read; the rest is not waited for. */
const ERROR_BODY_BYTES = 64 * 1024;
/** Characters of an upstream's error message that are repeated, at most. */
const MESSAGE_CHARS = 1000;
/** Characters of one value quoted in that message (or of a `param`), at most. */
const QUOTED_CHARS = 100;
/** A value quoted in a message: an opening quote that does not follow a letter or digit, up to
 * the same quote not followed by one (so "model's" quotes nothing), or to the end. */
const QUOTED =
  /(?<![\p{L}\p{N}])(["'`])((?:(?!\1(?![\p{L}\p{N}]))[\s\S])*)(\1(?![\p{L}\p{N}])|$)/gu;
/** What a `type` or `code` must look like to be kept. */
const IDENTIFIER = /^[\w.:-]{1,100}$/;

/**
 * An upstream's error detail made safe to repeat to the client (whose content it may quote):
 * `secret` removed, the message cut to 1,000 characters and every value quoted in it to 100,
 * `param` cut to 100, and `type` and `code` kept only when they are identifiers.
 */
export function boundedDetail(
  detail: UpstreamErrorDetail,
  secret: string | null,
): UpstreamErrorDetail {
  const { message, type, code, param } = detail;
  return {
    message: message === null ? null : clipQuoted(clip(redact(message, secret), MESSAGE_CHARS)),
    type: identifier(type, secret),
    code: identifier(code, secret),
    param: param === null ? null : clip(redact(param, secret), QUOTED_CHARS),
  };
}

/** `text` with every quoted value longer than 100 characters cut to 100. */
function clipQuoted(text: string): string {
  return text.replace(
    QUOTED,
    (whole: string, quote: string, value: string, close: string) =>
      value.length <= QUOTED_CHARS ? whole : `${quote}${clip(value, QUOTED_CHARS)}${close}`,
  );
}

function identifier(value: string | null, secret: string | null): string | null {
  return value !== null && IDENTIFIER.test(value) && value !== secret ? value : null;
}

/** Whether an upstream status may be retried before the first byte (DESIGN §6): what the
 * official OpenAI and Anthropic SDKs retry, a request timeout (408), a lock timeout (409), a
 * rate limit (429) and every 5xx (Anthropic's 529 included). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Whether an upstream's error answer may be retried, as the official SDKs decide: as its
 * `x-should-retry` says (`true` or `false`), else by {@link isRetryableStatus}. */
export function shouldRetry(status: number, headers: Headers): boolean {
  const asked = headers.get("x-should-retry");
  if (asked === "true") return true;
  if (asked === "false") return false;
  return isRetryableStatus(status);
}

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
  if (status === 401 || status === 403) {
    return upstreamError(
      `The upstream provider "${provider}" refused the gateway's credentials (HTTP ${status}); the operator must check its API key.`,
    );
  }
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

/** Removes a secret from text that came from outside (upstream messages, error reasons). */
export function redact(text: string, secret: string | null): string {
  return secret ? text.replaceAll(secret, "[redacted]") : text;
}

/** `message` with the upstream model's name, where it stands as a name (not inside a word: an
 * upstream model `fa` leaves "fake" alone; a full stop or a colon may follow it), replaced by
 * the gateway's id. */
function rewriteModel(message: string, model?: { id: string; upstream: string }): string {
  if (!model || model.upstream === model.id || model.upstream === "") return message;
  if (!message.includes(model.upstream)) return message;
  const name = model.upstream.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return message.replace(
    new RegExp(`(?<![\\w.:-])${name}(?![\\w/-]|[.:]\\w)`, "g"),
    () => model.id,
  );
}

/** The abort reason of an upstream call that is over (one instance: a DOMException records a
 * stack when it is made, which costs microseconds per request). */
const RELEASED = new DOMException("The upstream call is over.", "AbortError");

/** The client's signal and the provider's deadline, as one abort controller for the call. The
 * deadlines of a provider's calls share one timer (see `http/expiries.ts`). */
class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  readonly #expiry: Expiry;
  readonly #client: AbortSignal;
  readonly #onClientAbort = () => this.controller.abort(this.#client.reason);

  constructor(watch: Expiries, client: AbortSignal, ms: number) {
    this.#client = client;
    this.#expiry = watch.after(ms, () => this.#expire());
    if (client.aborted) this.close();
    else client.addEventListener("abort", this.#onClientAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get clientGone(): boolean {
    return this.#client.aborted;
  }

  /** Milliseconds left before the deadline. */
  remaining(): number {
    return this.#expiry.at - performance.now();
  }

  /** Restarts the deadline `ms` from now (cheap enough for every read of a stream). */
  arm(ms: number): void {
    this.#expiry.restart(ms);
  }

  /** Stops the clock until the next {@link arm} (while nothing waits for the upstream). */
  disarm(): void {
    this.#expiry.at = Infinity;
  }

  /** The deadline passed: aborts the call. */
  #expire(): void {
    this.timedOut = true;
    this.controller.abort(new DOMException("The upstream deadline passed.", "TimeoutError"));
  }

  /** Stops watching and, unless `finished` (the answer was read to its end), aborts
   * whatever is still running. */
  close(finished = false): void {
    this.#expiry.clear();
    this.#client.removeEventListener("abort", this.#onClientAbort);
    if (!finished && !this.controller.signal.aborted) {
      this.controller.abort(this.#client.aborted ? this.#client.reason : RELEASED);
    }
  }
}

/** Calls one provider's HTTP API: deadline, retries before the first byte, error mapping. */
export class Upstream {
  readonly #deps: ProviderDeps;
  readonly #style: UpstreamStyle;
  readonly #headers: Record<string, string>;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #random: () => number;
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
    this.#initialBackoffMs = timing.initialBackoffMs ?? 500;
    this.#maxBackoffMs = timing.maxBackoffMs ?? 8000;
    this.#random = timing.random ?? Math.random;
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

  /**
   * Sends the request, retrying on connection errors and what {@link shouldRetry} allows (408,
   * 409, 429, 5xx, or as `x-should-retry` says) while no answer has been accepted (bounded by
   * `max_retries` and the deadline, honouring `retry-after`). Resolves with a 2xx answer whose
   * body is still to be read; every failure is an ApiError.
   */
  async call(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { config } = this.#deps;
    // What the stream's closures below keep (the request's body would live as long as they).
    const { requestId } = request;
    const deadline = new Deadline(this.#deadlines, request.signal, config.timeout_ms);
    const call = {
      method: request.method,
      url: config.base_url + request.path,
      headers: this.#headers,
      signal: deadline.signal,
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    };
    try {
      for (let attempt = 0;; attempt++) {
        let response: ClientResponse;
        try {
          response = await this.#deps.http.request(call);
        } catch (e) {
          const failure = this.#thrown(e, deadline, "connect", request.requestId);
          if (
            failure.status === 502 && !(e instanceof ContentEncodingRefused) &&
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
    if (e instanceof ContentEncodingRefused) {
      // The upstream answered, in a form the gateway does not read: not a connection failure,
      // and not retried (it would answer the same way).
      this.#warn(`refused the answer: ${reason}`, requestId);
      return new ApiError(
        502,
        "upstream_error",
        `The upstream provider "${id}" answered with Content-Encoding ${e.encoding}, which the gateway does not read; the operator must check its configuration.`,
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
      : this.#style.parseError(body);
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
        this.#deps.config.api_key_env ?? "the provider's headers"
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
    if (attempt >= this.#deps.config.max_retries) return false;
    const asked = headers === null ? null : retryAfterMs(headers, this.#deps.clock.now());
    const backoff = Math.min(this.#initialBackoffMs * 2 ** attempt, this.#maxBackoffMs) *
      (1 - 0.25 * this.#random());
    const wait = asked ?? backoff;
    if (wait >= deadline.remaining()) return false;
    this.#warn(
      `retrying in ${Math.round(wait)} ms (retry ${
        attempt + 1
      } of ${this.#deps.config.max_retries})`,
      request.requestId,
    );
    await sleep(wait, deadline.signal);
    if (deadline.signal.aborted) {
      throw this.#thrown(deadline.signal.reason, deadline, "connect", request.requestId);
    }
    return true;
  }

  #warn(message: string, requestId: string): void {
    this.#deps.logger.warn(`provider "${this.#deps.config.id}" (${requestId}): ${message}`);
  }
}

interface BodyReading {
  deadline: Deadline;
  /** For streams: the deadline restarts with this many milliseconds before every read. */
  idleMs: number | null;
  /** Bytes the body may have (a JSON answer, or a whole stream). */
  maxBytes: number;
  /** Bytes one event of a stream may have. */
  maxEventBytes: number;
  readFailure: (e: unknown) => ApiError;
  /** The error for a body over `maxBytes` ("answer") or an event over `maxEventBytes`. */
  tooLarge: (what: "answer" | "event") => ApiError;
}

/** An accepted (2xx) upstream answer whose body is read within the deadline. */
export class UpstreamResponse {
  readonly #response: ClientResponse;
  readonly #reading: BodyReading;
  /** Whether the body was read to its end (nothing is left to abort). */
  #finished = false;
  /** Whether `readEvents` has returned the last events. */
  #ended = false;
  /** Bytes of the stream read so far. */
  #received = 0;
  #decoder: SseDecoder | null = null;
  /** For streams: milliseconds the upstream has left to send its next event, once a read
   * brought none (`null`: the whole timeout, from the next wait). */
  #waitLeft: number | null = null;

  constructor(response: ClientResponse, reading: BodyReading) {
    this.#response = response;
    this.#reading = reading;
  }

  /** The body as JSON; a body that is not JSON, or longer than `max_response_bytes` (read no
   * further than that), is a 502. */
  async json(): Promise<unknown> {
    const { maxBytes } = this.#reading;
    const declared = this.#response.length;
    if (declared !== null && declared > maxBytes) throw this.#reading.tooLarge("answer");
    let body: TextPrefix;
    try {
      body = await this.#response.text(maxBytes);
    } catch (e) {
      throw this.#reading.readFailure(e);
    }
    if (!body.complete) throw this.#reading.tooLarge("answer");
    this.#finished = true;
    try {
      return JSON.parse(body.text);
    } catch {
      throw upstreamError("The upstream provider answered with a body that is not JSON.");
    }
  }

  /**
   * The server-sent events that the body's next network read completed (possibly none), or
   * `null` once the body has ended. Grouping by read lets a consumer answer a burst of events
   * with one write. Each read must arrive within the provider's timeout, counted from when it
   * is asked for (the time our client takes to ask for more is not the upstream's); a broken
   * connection is a 502, a stall a 504, a stream over `max_response_bytes` or an event over
   * `max_event_bytes` a 502 (then `close` cuts the connection).
   */
  async readEvents(): Promise<SseEvent[] | null> {
    for (;;) {
      const events = this.takeEvents();
      if (events !== undefined) return events;
      await this.more();
    }
  }

  /** The events of the bytes that have arrived (see {@link readEvents}), `null` at the end, or
   * `undefined` when {@link more} must wait for more. Waits for nothing. */
  takeEvents(): SseEvent[] | null | undefined {
    if (this.#ended) return null;
    let bytes: Uint8Array | null | undefined;
    try {
      // Taking parses the body's framing (chunk sizes), which a broken upstream can get wrong.
      bytes = this.#response.take();
    } catch (e) {
      throw this.#reading.readFailure(e);
    }
    if (bytes === undefined) return undefined;
    this.#decoder ??= new SseDecoder(this.#reading.maxEventBytes);
    if (bytes !== null) {
      this.#received += bytes.byteLength;
      if (this.#received > this.#reading.maxBytes) throw this.#reading.tooLarge("answer");
      let events: SseEvent[];
      try {
        events = this.#decoder.decode(bytes);
      } catch (e) {
        throw e instanceof SseEventTooLarge ? this.#reading.tooLarge("event") : e;
      }
      // An event restarts the upstream's time; comments and pieces of an event do not.
      if (events.length > 0) this.#waitLeft = null;
      return events;
    }
    this.#ended = this.#finished = true;
    const rest = this.#decoder.end();
    return rest.length > 0 ? rest : null;
  }

  /** Waits for more of the body, within the provider's timeout (see {@link readEvents}). (A
   * plain function over the read's promise: an async one cost a frame for every chunk.) */
  more(): Promise<void> {
    const { deadline, idleMs } = this.#reading;
    if (idleMs !== null) deadline.arm(this.#waitLeft ?? idleMs);
    return this.#response.more().then(this.#arrived, this.#failed);
  }

  /** After a read: the clock stops while our client is busy, keeping what is left of it when
   * the read brought no event (a keep-alive comment every few seconds must not hold a stream
   * open for ever). */
  readonly #arrived = (): void => {
    const { deadline, idleMs } = this.#reading;
    if (idleMs === null) return;
    this.#waitLeft = deadline.remaining();
    deadline.disarm();
  };

  readonly #failed = (e: unknown): never => {
    this.#arrived();
    throw this.#reading.readFailure(e);
  };

  /**
   * For a consumer that has all it needs (the stream's end marker came) before the body ended:
   * reads what is left in the background, for at most a second, so that the connection can go
   * back to the pool instead of being cut; then closes.
   */
  release(): void {
    if (this.#finished || this.#reading.deadline.signal.aborted) {
      return this.close();
    }
    this.#reading.deadline.arm(Math.min(1000, this.#reading.idleMs ?? 1000));
    (async () => {
      while ((await this.#response.read()) !== null) { /* discard */ }
      this.#finished = true;
    })().catch(() => {}).finally(() => this.close());
  }

  /** Aborts the upstream call if it is still running and releases the deadline timer. */
  close(): void {
    if (!this.#finished) this.#response.cancel();
    this.#reading.deadline.close(this.#finished);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
