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
 * each change an optimistic transaction on the entry's versionstamp, submitted through the
 * limiter's group commit. Within a process, the changes of one subject that wait together are
 * decided in order and committed at once.
 */
import type { Clock } from "../clock.ts";
import type { LimitScope } from "../config.ts";
import { ApiError, rateLimited } from "../errors.ts";
import { kvBackoff, retryWhileBusy } from "../kv/busy.ts";
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
  /** Accounts kept in memory before idle ones are dropped. */
  maxAccounts?: number;
}

type Change =
  | {
    kind: "reserve";
    tokens: number;
    limit: TokenLimit;
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

/** A subject's counter as this process last saw it, and its waiting changes. */
class Account {
  known = false;
  counts: Counts | null = null;
  versionstamp: string | null = null;
  queue: Change[] = [];
  running = false;

  constructor(readonly key: Deno.KvKey, readonly scope: LimitScope, readonly keyed: boolean) {}
}

const EXPIRY_SLACK_MS = 60_000;
/** How long one batch keeps trying against other processes before answering 503. */
const SETTLE_BUDGET_MS = 5000;

/** Exact token limits over minute and day windows, shared by every process on the KV. */
export class TokenLedger {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #commits: GroupCommit;
  readonly #maxAccounts: number;
  readonly #accounts = new Map<string, Account>();

  constructor(options: TokenLedgerOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#commits = options.commits;
    this.#maxAccounts = options.maxAccounts ?? 10_000;
  }

  /** Reserves `tokens` for a request of `subject` in `scope`: resolves with the reservation,
   * or rejects with 429 when a window of `limit` cannot hold them. */
  reserve(scope: LimitScope, subject: TokenSubject, limit: TokenLimit, tokens: number) {
    const account = this.#account(scope, subject);
    return new Promise<Grant>((resolve, reject) => {
      this.#enqueue(account, { kind: "reserve", tokens, limit, resolve, reject });
    });
  }

  /** Replaces a reservation by the tokens the request used (in the windows it was made in;
   * a window that has ended since is left as it is). */
  settle(reservation: Reservation, used: number): Promise<void> {
    const delta = used - reservation.tokens;
    if (delta === 0) return Promise.resolve();
    const [, scope, kind, id] = reservation.key as [string, LimitScope, "ip" | "key", string];
    const account = this.#account(scope, { kind, id });
    return new Promise<void>((resolve, reject) => {
      this.#enqueue(account, { kind: "release", reservation, delta, resolve, reject });
    });
  }

  #account(scope: LimitScope, subject: TokenSubject): Account {
    const id = `${scope}\u0000${subject.kind}\u0000${subject.id}`;
    let account = this.#accounts.get(id);
    if (account) return account;
    if (this.#accounts.size >= this.#maxAccounts) {
      for (const [aid, a] of this.#accounts) {
        if (!a.running && a.queue.length === 0) this.#accounts.delete(aid);
      }
    }
    account = new Account(
      ["tokens", scope, subject.kind, subject.id],
      scope,
      subject.kind === "key",
    );
    this.#accounts.set(id, account);
    return account;
  }

  #enqueue(account: Account, change: Change): void {
    account.queue.push(change);
    if (!account.running) this.#run(account);
  }

  async #run(account: Account): Promise<void> {
    account.running = true;
    try {
      while (account.queue.length > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        const batch = account.queue;
        account.queue = [];
        try {
          await this.#apply(account, batch);
        } catch (e) {
          account.known = false;
          for (const change of batch) change.reject(e);
        }
      }
    } finally {
      account.running = false;
    }
  }

  /** Decides a batch in order against the current counts and commits it in one write. */
  async #apply(account: Account, batch: Change[]): Promise<void> {
    const giveUpAt = performance.now() + SETTLE_BUDGET_MS;
    for (let attempt = 1;; attempt++) {
      if (!account.known) {
        const entry = await retryWhileBusy(() => this.#kv.get<Counts>(account.key));
        account.counts = entry.value;
        account.versionstamp = entry.versionstamp;
        account.known = true;
      }
      const now = this.#clock.now();
      const counts = current(account.counts, now);
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
          const error = refusal(account, full, change.tokens, now);
          outcomes.push(() => change.reject(error));
          continue;
        }
        counts[1] += change.tokens;
        counts[3] += change.tokens;
        const reservation: Reservation = {
          key: account.key,
          tokens: change.tokens,
          minuteStart: counts[0],
          dayStart: counts[2],
        };
        const window = tightestWindow(windows);
        outcomes.push(() => change.resolve({ reservation, window }));
      }
      const changed = account.counts === null ||
        counts.some((value, i) => value !== account.counts![i]);
      if (!changed) {
        for (const done of outcomes) done();
        return;
      }
      const outcome = await this.#commits.submit({
        checks: [{ key: account.key, versionstamp: account.versionstamp }],
        key: account.key,
        value: counts,
        expireIn: counts[2] + WINDOWS[1].ms - now + EXPIRY_SLACK_MS,
      });
      if (outcome.kind === "committed") {
        account.counts = counts;
        account.versionstamp = outcome.versionstamp;
        for (const done of outcomes) done();
        return;
      }
      // Another process changed the counter, or held the lock: read and decide again.
      account.known = false;
      if (performance.now() > giveUpAt) throw busy();
      await kvBackoff(attempt);
    }
  }
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

function refusal(account: Account, window: WindowState, tokens: number, now: number): ApiError {
  const headers = new Headers();
  setTokenHeaders(headers, window, now);
  const subject = account.keyed ? "for this API key" : "per IP address for anonymous callers";
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
