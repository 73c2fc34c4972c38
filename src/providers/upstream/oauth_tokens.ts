/**
 * OAuth 2.0 access tokens for an upstream's calls (Vertex AI's service accounts and workload
 * identity federation, Azure's Entra ID client credentials): a grant exchanged at the token
 * endpoint, the token kept until shortly
 * before it expires, and fetched once for all the calls that need it meanwhile (one exchange in
 * flight). A token the upstream refused (401) is dropped, so that the call's retry gets a new
 * one. An exchange the token endpoint throttles (429), fails (5xx) or that cannot connect is
 * retried as upstream calls are (`max_retries`, the same back-off, `retry-after` honoured),
 * within `timeout_ms`.
 */
import { untilAborted } from "../../abort.ts";
import { type ApiError, upstreamError } from "../../errors.ts";
import type { Clock } from "../../clock.ts";
import type { HttpClient } from "../../http/client/types.ts";
import type { Logger } from "../../log/logger.ts";
import { sleep } from "../../sleep.ts";
import { isObject } from "../wire.ts";
import { RetryPolicy, type RetryTiming, shouldRetry } from "./retry.ts";
import type { UpstreamCredentials } from "./upstream.ts";
import type { ProviderDeps } from "../types.ts";

/** A grant that cannot be made (a key that cannot sign): its message says why, naming no
 * secret. */
export class GrantError extends Error {}

/** One token request: a grant's form (`grant_type` and the credentials) POSTed to the token
 * endpoint, a GET with headers (a cloud's metadata server, which knows the workload), or a JSON
 * body POSTed with headers (Google's IAM Credentials API, with the token it exchanges for
 * another). */
export type TokenRequest =
  | { form: string }
  | { headers: Record<string, string> }
  | { json: string; headers: Record<string, string> };

/** What {@link OAuthTokens} needs. */
export interface OAuthTokenDeps {
  /** The provider's id, for errors and warnings. */
  provider: string;
  tokenUrl: string;
  /** The token request, made for each exchange; throws a {@link GrantError} when it cannot be
   * made. */
  request: () => Promise<TokenRequest>;
  /** What the token endpoint refuses ("its service account"), and what the operator checks
   * then ("credentials_env"). */
  credentials: { what: string; check: string };
  /** The most an exchange may take, in milliseconds, its retries included. */
  timeoutMs: number;
  /** Retries of an exchange that failed in a way worth retrying (the provider's
   * `max_retries`). */
  maxRetries: number;
  /** The back-off between them (upstream calls' own; tests shorten it). */
  timing?: RetryTiming;
  http: HttpClient;
  clock: Clock;
  logger: Logger;
}

/** The fields of {@link OAuthTokenDeps} a provider's own config and dependencies give: its id,
 * its deadline and retries, its clients. */
export function exchangeDeps(
  deps: ProviderDeps,
  timing: RetryTiming,
): Omit<OAuthTokenDeps, "tokenUrl" | "request" | "credentials"> {
  return {
    provider: deps.config.id,
    timeoutMs: deps.config.timeout_ms,
    maxRetries: deps.config.max_retries,
    timing,
    http: deps.http,
    clock: deps.clock,
    logger: deps.logger,
  };
}

/** A token and when it expires (Unix milliseconds). */
interface Token {
  value: string;
  expires: number;
}

/** A failed exchange: what it is to the caller, and whether another attempt may do better
 * (with the answer's headers, for its `retry-after`). */
interface Failure {
  what: string;
  retryable: boolean;
  headers: Headers | null;
}

/** Seconds a token lives when the endpoint does not say (Google's and Entra's live an hour). */
const DEFAULT_LIFETIME_SECONDS = 3600;
/** A token is renewed this long before it expires (Google's client libraries: 5 minutes), or
 * at half its life when that is shorter. */
const RENEW_BEFORE_MS = 5 * 60_000;
/** Bytes of the token endpoint's answer that are read. */
const ANSWER_BYTES = 64 * 1024;

/** One set of credentials' access tokens, as headers for an upstream's calls. */
export class OAuthTokens implements UpstreamCredentials {
  readonly #deps: OAuthTokenDeps;
  readonly #retries: RetryPolicy;
  #token: Token | null = null;
  #renewAt = 0;
  #pending: Promise<Token> | null = null;

  constructor(deps: OAuthTokenDeps) {
    this.#deps = deps;
    this.#retries = new RetryPolicy(deps.maxRetries, deps.timing);
  }

  async headers(
    signal: AbortSignal,
    refused: Readonly<Record<string, string>> | null,
  ): Promise<Record<string, string>> {
    const held = this.#token;
    if (held !== null && refused?.authorization === bearer(held)) this.#token = null;
    const token = this.#token !== null && this.#deps.clock.now() < this.#renewAt
      ? this.#token
      : await untilAborted(this.#pending ?? this.#renew(), signal);
    return { authorization: bearer(token) };
  }

  /** Starts the exchange the calls that need a token wait for. */
  #renew(): Promise<Token> {
    const pending: Promise<Token> = this.#exchange().finally(() => {
      if (this.#pending === pending) this.#pending = null;
    });
    this.#pending = pending;
    return pending;
  }

  /** Exchanges a new grant for a token, which replaces the one held; retried while the
   * failure allows and the deadline leaves time for the wait. */
  async #exchange(): Promise<Token> {
    const { timeoutMs, clock } = this.#deps;
    let request: TokenRequest;
    try {
      request = await this.#deps.request();
    } catch (e) {
      if (e instanceof GrantError) throw this.#failure(e.message);
      throw e;
    }
    const deadline = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    for (let attempt = 0;; attempt++) {
      const outcome = await this.#attempt(request, deadline);
      if (!("what" in outcome)) return outcome;
      const left = timeoutMs - (performance.now() - started);
      const wait = outcome.retryable
        ? this.#retries.wait(attempt, outcome.headers, clock.now(), left)
        : null;
      if (wait === null) throw this.#failure(outcome.what);
      this.#deps.logger.warn(
        `provider "${this.#deps.provider}": no access token yet: ${outcome.what}; retrying in ${
          Math.round(wait)
        } ms (retry ${attempt + 1} of ${this.#deps.maxRetries})`,
      );
      try {
        await sleep(wait, deadline);
      } catch {
        throw this.#failure(`the token endpoint did not answer within ${timeoutMs} ms`);
      }
    }
  }

  /** One exchange at the token endpoint: the token, or why there is none. */
  async #attempt(request: TokenRequest, deadline: AbortSignal): Promise<Token | Failure> {
    const { tokenUrl, timeoutMs, http, clock } = this.#deps;
    let text: string;
    let status: number;
    let headers: Headers;
    try {
      const response = await http.request(
        "form" in request
          ? {
            method: "POST",
            url: tokenUrl,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: request.form,
            signal: deadline,
          }
          : "json" in request
          ? {
            method: "POST",
            url: tokenUrl,
            headers: { ...request.headers, "content-type": "application/json" },
            body: request.json,
            signal: deadline,
          }
          : { method: "GET", url: tokenUrl, headers: request.headers, signal: deadline },
      );
      status = response.status;
      headers = response.headers;
      text = (await response.text(ANSWER_BYTES)).text;
    } catch (e) {
      const timedOut = deadline.aborted ||
        (e instanceof DOMException && e.name === "TimeoutError");
      return timedOut
        ? {
          what: `the token endpoint did not answer within ${timeoutMs} ms`,
          retryable: false,
          headers: null,
        }
        : { what: "the token endpoint could not be reached", retryable: true, headers: null };
    }
    let answer: unknown = null;
    try {
      answer = JSON.parse(text);
    } catch {
      // Not JSON: reported below by its status.
    }
    if (status < 200 || status >= 300) {
      // The OAuth error code (`invalid_grant`) only: its description may quote the account.
      const code = isObject(answer) && typeof answer.error === "string" &&
          /^[a-z_]{1,64}$/.test(answer.error)
        ? ` ${answer.error}`
        : "";
      const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
      return {
        what: refused
          ? `the token endpoint refused ${this.#deps.credentials.what} (HTTP ${status}${code}); check ${this.#deps.credentials.check}`
          : `the token endpoint failed (HTTP ${status}${code})`,
        retryable: shouldRetry(status, headers),
        headers,
      };
    }
    const now = clock.now();
    const issued = isObject(answer) ? issuedToken(answer, now) : null;
    if (issued === null) {
      return {
        what: "the token endpoint answered without an access_token",
        retryable: false,
        headers: null,
      };
    }
    const lifetime = issued.seconds;
    const seconds = lifetime > 0 && Number.isFinite(lifetime) ? lifetime : DEFAULT_LIFETIME_SECONDS;
    const token = { value: issued.value, expires: now + seconds * 1000 };
    this.#token = token;
    this.#renewAt = token.expires - Math.min(RENEW_BEFORE_MS, seconds * 500);
    return token;
  }

  /** The 502 of a failed exchange (warned about once per exchange); it names no secret. */
  #failure(what: string): ApiError {
    const { provider, logger } = this.#deps;
    logger.warn(`provider "${provider}": no access token: ${what}`);
    return upstreamError(
      `The upstream provider "${provider}" could not authenticate: ${what}. The operator must check its configuration.`,
    );
  }
}

/** The token of an answer and its lifetime in seconds (`NaN` when not given): OAuth's
 * `access_token` and `expires_in` (a number, or a number in a string as Azure's managed identity
 * endpoints write it), or Google's IAM Credentials API's `accessToken` and `expireTime` (an
 * RFC 3339 time); `null` without a token. */
function issuedToken(
  answer: Record<string, unknown>,
  now: number,
): { value: string; seconds: number } | null {
  if (typeof answer.access_token === "string" && answer.access_token !== "") {
    const given = answer.expires_in;
    const seconds = typeof given === "number" || typeof given === "string" ? Number(given) : NaN;
    return { value: answer.access_token, seconds };
  }
  if (typeof answer.accessToken === "string" && answer.accessToken !== "") {
    const expires = typeof answer.expireTime === "string" ? Date.parse(answer.expireTime) : NaN;
    return { value: answer.accessToken, seconds: (expires - now) / 1000 };
  }
  return null;
}

function bearer(token: Token): string {
  return `Bearer ${token.value}`;
}
