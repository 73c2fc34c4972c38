/**
 * Token limits (DESIGN §8): per client IP or key, tokens (input + output) per minute and per
 * day, with exact reservations. At admission a request reserves its worst case (its estimated
 * prompt plus its max output tokens); when it settles the reservation is replaced by what the
 * upstream reported. A reservation that does not fit a window is refused with 429, so the
 * tokens counted in a window never pass its limit by more than what requests used beyond their
 * reservations (nothing, when the prompt estimate holds).
 *
 * Storage and exactness follow the request limiter: one KV entry per (scope, subject),
 * `["tokens", scope, "ip" | "key", subject] → [minuteStart, minuteTokens, dayStart, dayTokens]`,
 * changed by optimistic transactions (accounts.ts) through the limiter's group commit.
 */
import type { Clock } from "../clock.ts";
import type { LimitScope } from "../config.ts";
import { ApiError, rateLimited } from "../errors.ts";
import { Accounts, type Decision } from "./accounts.ts";
import type { GroupCommit } from "./group_commit.ts";
import {
  blockingWindow,
  formatDuration,
  retryAfterSeconds,
  tightestWindow,
  WINDOWS,
  type WindowState,
} from "./windows.ts";

/** `[minuteStart, minuteTokens, dayStart, dayTokens]`, as stored in KV. */
type Counts = [number, number, number, number];

/** A subject's token limits per window (`null`: none). */
export interface TokenLimit {
  per_minute: number | null;
  per_day: number | null;
}

/** Whose tokens are counted: an anonymous client's address (see subject.ts) or a key's id. */
export interface TokenSubject {
  kind: "ip" | "key";
  id: string;
}

/** Tokens held for a request until it settles. */
export interface Reservation {
  readonly key: Deno.KvKey;
  readonly tokens: number;
  /** The windows (by start) the tokens were counted in. */
  readonly minuteStart: number;
  readonly dayStart: number;
}

/** What {@link TokenLedger.reserve} grants: the reservation and the headers' window. */
export interface Grant {
  reservation: Reservation;
  window: WindowState;
}

/** Options for {@link TokenLedger}. */
export interface TokenLedgerOptions {
  kv: Deno.Kv;
  clock: Clock;
  commits: GroupCommit;
  /** Counters kept in memory before idle ones are dropped. */
  maxAccounts?: number;
}

type Change =
  | {
    kind: "reserve";
    /** The counter's key, for the reservation. */
    key: Deno.KvKey;
    tokens: number;
    limit: TokenLimit;
    keyed: boolean;
    resolve(grant: Grant): void;
    reject(error: unknown): void;
  }
  | {
    kind: "release";
    reservation: Reservation;
    /** Tokens to add (negative: give back) in the reservation's windows. */
    delta: number;
    resolve(): void;
    reject(error: unknown): void;
  };

const EXPIRY_SLACK_MS = 60_000;

/** Exact token limits over minute and day windows, shared by every process on the KV. */
export class TokenLedger {
  readonly #accounts: Accounts<Counts, Change>;

  constructor(options: TokenLedgerOptions) {
    this.#accounts = new Accounts<Counts, Change>({
      kv: options.kv,
      commits: options.commits,
      now: () => options.clock.now(),
      decide,
      expireIn: (counts, now) => counts[2] + WINDOWS[1].ms - now + EXPIRY_SLACK_MS,
      busy,
      ...(options.maxAccounts !== undefined ? { maxAccounts: options.maxAccounts } : {}),
    });
  }

  /** Reserves `tokens` for a request of `subject` in `scope`: resolves with the reservation,
   * or rejects with 429 when a window of `limit` cannot hold them. */
  reserve(
    scope: LimitScope,
    subject: TokenSubject,
    limit: TokenLimit,
    tokens: number,
  ): Promise<Grant> {
    const key = ["tokens", scope, subject.kind, subject.id];
    const keyed = subject.kind === "key";
    return new Promise<Grant>((resolve, reject) => {
      this.#accounts.submit(key, { kind: "reserve", key, tokens, limit, keyed, resolve, reject });
    });
  }

  /** Replaces a reservation by the tokens the request used (in the windows it was made in;
   * a window that has ended since is left as it is). */
  settle(reservation: Reservation, used: number): Promise<void> {
    const delta = used - reservation.tokens;
    if (delta === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#accounts.submit(reservation.key, {
        kind: "release",
        reservation,
        delta,
        resolve,
        reject,
      });
    });
  }
}

/** Decides a batch of one counter's changes in order: releases always apply, a reservation
 * only if every window can hold it. */
function decide(stored: Counts | null, batch: readonly Change[], now: number): Decision<Counts> {
  const counts = current(stored, now);
  const outcomes: (() => void)[] = [];
  for (const change of batch) {
    if (change.kind === "release") {
      const { reservation, delta } = change;
      if (reservation.minuteStart === counts[0]) counts[1] = Math.max(0, counts[1] + delta);
      if (reservation.dayStart === counts[2]) counts[3] = Math.max(0, counts[3] + delta);
      outcomes.push(() => change.resolve());
      continue;
    }
    const windows = states(counts, change.limit, change.tokens);
    const full = blockingWindow(windows.filter((w) => w.remaining < 0));
    if (full) {
      const error = refusal(change.keyed, full, change.tokens, now);
      outcomes.push(() => change.reject(error));
      continue;
    }
    counts[1] += change.tokens;
    counts[3] += change.tokens;
    const reservation: Reservation = {
      key: change.key,
      tokens: change.tokens,
      minuteStart: counts[0],
      dayStart: counts[2],
    };
    const window = tightestWindow(windows);
    outcomes.push(() => change.resolve({ reservation, window }));
  }
  const changed = stored === null || counts.some((value, i) => value !== stored[i]);
  return { value: counts, changed, outcomes };
}

/** The counts for the windows that contain `now` (see limiter.ts's `current`). */
function current(stored: Counts | null, now: number): Counts {
  const minute = now - (now % WINDOWS[0].ms);
  const day = now - (now % WINDOWS[1].ms);
  if (stored === null) return [minute, 0, day, 0];
  const [ms, mc, ds, dc] = stored;
  return [
    ms >= minute ? ms : minute,
    ms >= minute ? mc : 0,
    ds >= day ? ds : day,
    ds >= day ? dc : 0,
  ];
}

/** The limited windows' states after `tokens` more; `remaining` is negative when they do not
 * fit. */
function states(counts: Counts, limit: TokenLimit, tokens: number): WindowState[] {
  const out: WindowState[] = [];
  for (const [i, w] of WINDOWS.entries()) {
    const max = limit[w.field];
    if (max === null) continue;
    out.push({
      name: w.name,
      limit: max,
      remaining: max - counts[2 * i + 1]! - tokens,
      resetAt: counts[2 * i]! + w.ms,
    });
  }
  return out;
}

/** Writes the `x-ratelimit-*-tokens` headers for a window as of `now`. */
export function setTokenHeaders(headers: Headers, window: WindowState, now: number): void {
  headers.set("x-ratelimit-limit-tokens", String(window.limit));
  headers.set("x-ratelimit-remaining-tokens", String(Math.max(0, window.remaining)));
  headers.set("x-ratelimit-reset-tokens", formatDuration(window.resetAt - now));
}

function refusal(keyed: boolean, window: WindowState, tokens: number, now: number): ApiError {
  const headers = new Headers();
  setTokenHeaders(headers, window, now);
  const subject = keyed ? "for this API key" : "per IP address for anonymous callers";
  const left = Math.max(0, window.remaining + tokens);
  if (tokens > window.limit) {
    return rateLimited(
      `Request too large: it may use up to ${tokens} tokens (its prompt plus its maximum output), more than the limit of ${window.limit} tokens per ${window.name} ${subject}. Lower the maximum output tokens or shorten the prompt.`,
      headers,
    );
  }
  const retryAfter = retryAfterSeconds(window, now);
  headers.set("retry-after", String(retryAfter));
  return rateLimited(
    `Rate limit reached for tokens: ${window.limit} per ${window.name} ${subject}, ${left} left; this request may use up to ${tokens} (its prompt plus its maximum output). Try again in ${retryAfter} s, or lower the maximum output tokens.`,
    headers,
  );
}

function busy(): ApiError {
  return new ApiError(
    503,
    "server_error",
    "The token ledger could not settle this request under heavy contention; try again.",
    { code: "rate_limiter_busy" },
  );
}
