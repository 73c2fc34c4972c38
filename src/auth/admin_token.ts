import { createHash, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.ts";
import { ConfigError } from "../config/error.ts";
import { rateLimited, unauthorized } from "../errors.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import { bearerToken } from "./authenticate.ts";

/** Characters an admin token must have at least (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_ADMIN_TOKEN_CHARS = 32;

/** Failed admin authentications one IP may make per minute; the next is a 429 until the
 * minute is over, whatever token it carries. */
export const ADMIN_FAILURES_PER_MINUTE = 10;

/** `["admin_auth_failures", ip] -> { minute, count }`: one fixed window per IP, kept 2 min. */
const FAILURES_PREFIX = ["admin_auth_failures"] as const;
const MINUTE_MS = 60_000;

interface Failures {
  /** The minute (ms since the epoch / 60,000) counted. */
  minute: number;
  count: number;
}

function digest(text: string): Uint8Array {
  return createHash("sha256").update(text).digest();
}

/** A bearer token checked in constant time: both sides are hashed to 32 bytes first, so
 * neither the content nor the length leaks. */
export class SecretToken {
  readonly #digest: Uint8Array;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  /** Whether `token` is this one. */
  is(token: string): boolean {
    return timingSafeEqual(digest(token), this.#digest);
  }

  /** Whether the request carries `Authorization: Bearer <this token>`. */
  matches(request: Request): boolean {
    const header = request.headers.get("authorization");
    const token = header === null ? null : bearerToken(header);
    return token !== null && this.is(token);
  }
}

/** Options for {@link TokenAttempts} and {@link AdminToken}. */
export interface AdminTokenOptions {
  /** Where failed attempts are counted, shared by every instance. */
  kv: Deno.Kv;
  clock: Clock;
  failuresPerMinute?: number;
}

/** What a refused attempt is told: no bearer token at all, or a wrong one. */
export interface TokenWords {
  missing: string;
  wrong: string;
}

/**
 * Failed attempts at the gateway's bearer tokens (the admin token, the metrics token), counted
 * per client IP in KV, exactly and across instances: past {@link ADMIN_FAILURES_PER_MINUTE} in
 * a minute the IP gets 429 with `retry-after`, whatever token it carries and wherever it
 * guesses (`/admin/...` or `/metrics` count together).
 */
export class TokenAttempts {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #perMinute: number;

  constructor(options: AdminTokenOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#perMinute = options.failuresPerMinute ?? ADMIN_FAILURES_PER_MINUTE;
  }

  /** Resolves when the request's bearer token is one `accepts` takes and its IP is not
   * blocked; otherwise rejects with 401 (a wrong token counted) or 429. */
  async check(
    request: Request,
    ip: string,
    accepts: (token: string) => boolean,
    words: TokenWords,
  ): Promise<void> {
    const key = [...FAILURES_PREFIX, ip];
    const minute = Math.floor(this.#clock.now() / MINUTE_MS);
    const seen = await this.#kv.get<Failures>(key);
    if (seen.value && seen.value.minute === minute && seen.value.count >= this.#perMinute) {
      throw this.#blocked(minute);
    }
    const header = request.headers.get("authorization");
    const token = header === null ? null : bearerToken(header);
    if (token === null) throw unauthorized(words.missing);
    if (accepts(token)) return;
    // Only a token that was tried counts: guessing is what the limit stops.
    if (!(await this.#countFailure(key, minute))) throw this.#blocked(minute);
    throw unauthorized(words.wrong);
  }

  /** Counts one failure in `minute`; `false` when the minute's allowance was already spent
   * (by a concurrent request). Exact: each count is a checked write of the one it read. */
  async #countFailure(key: Deno.KvKey, minute: number): Promise<boolean> {
    for (;;) {
      const entry = await this.#kv.get<Failures>(key);
      const count = entry.value?.minute === minute ? entry.value.count : 0;
      if (count >= this.#perMinute) return false;
      const result = await retryWhileBusy(() =>
        this.#kv.atomic()
          .check(entry)
          .set(key, { minute, count: count + 1 }, { expireIn: 2 * MINUTE_MS })
          .commit()
      );
      if (result.ok) return true;
    }
  }

  #blocked(minute: number): Error {
    const retryAfter = Math.max(
      1,
      Math.ceil(((minute + 1) * MINUTE_MS - this.#clock.now()) / 1000),
    );
    return rateLimited(
      `Too many failed admin authentications from this address (at most ` +
        `${this.#perMinute} a minute). Try again in ${retryAfter} s.`,
      { "retry-after": String(retryAfter) },
    );
  }
}

const ADMIN_WORDS: TokenWords = {
  missing: 'The admin API needs "Authorization: Bearer <SWITCHYARD_ADMIN_TOKEN>".',
  wrong: "Incorrect admin token.",
};

/**
 * The admin API's bearer token (`SWITCHYARD_ADMIN_TOKEN`), checked in constant time (see
 * {@link SecretToken}), its failed attempts counted by {@link TokenAttempts}.
 */
export class AdminToken {
  readonly #secret: SecretToken;
  readonly #attempts: TokenAttempts;

  /** Throws {@link ConfigError} for a token shorter than {@link MIN_ADMIN_TOKEN_CHARS}. */
  constructor(token: string, attempts: TokenAttempts) {
    if (token.length < MIN_ADMIN_TOKEN_CHARS) {
      throw new ConfigError(
        `SWITCHYARD_ADMIN_TOKEN: must be at least ${MIN_ADMIN_TOKEN_CHARS} characters, not ` +
          `${token.length} (make one with: openssl rand -hex 32)`,
      );
    }
    this.#secret = new SecretToken(token);
    this.#attempts = attempts;
  }

  /** Resolves when the request carries `Authorization: Bearer <the token>` and its IP is not
   * blocked; otherwise rejects with 401 (counted) or 429. */
  authorize(request: Request, ip: string): Promise<void> {
    return this.#attempts.check(request, ip, (token) => this.#secret.is(token), ADMIN_WORDS);
  }
}
