/**
 * The ledger (DESIGN §8): amounts counted per subject over calendar windows with exact
 * reservations: tokens (input + output) per minute and per day for IPs and keys, spend per day
 * and per month for keys. At admission a request reserves its worst case; when it settles the
 * reservation is replaced by what it really used. A reservation that does not fit a window is
 * refused with 429, so what a window counts never passes its limit by more than what requests
 * used beyond their reservations (nothing, when the worst case holds).
 *
 * Storage and exactness follow the request limiter: one KV entry per subject,
 * `[...prefix, subject] -> [start1, amount1, start2, amount2]` (one pair per window), changed by
 * optimistic transactions (accounts.ts) through the limiter's group commit.
 */
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { Accounts, type Decision } from "./accounts.ts";
import type { GroupCommit } from "./group_commit.ts";
import { blockingWindow, tightestWindow, WINDOWS, type WindowState } from "./windows.ts";

/** One calendar window of a ledger: its name and where the window holding `now` starts and
 * ends. */
export interface LedgerWindow {
  name: WindowState["name"];
  start(now: number): number;
  end(start: number): number;
}

/** A minute, as the request limits count it. */
export const MINUTE: LedgerWindow = fixed(WINDOWS[0]);
/** A UTC day. */
export const DAY: LedgerWindow = fixed(WINDOWS[1]);
/** A UTC calendar month. */
export const MONTH: LedgerWindow = {
  name: "month",
  start(now) {
    const d = new Date(now);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  },
  end(start) {
    const d = new Date(start);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  },
};

function fixed(w: { name: "minute" | "day"; ms: number }): LedgerWindow {
  return { name: w.name, start: (now) => now - (now % w.ms), end: (start) => start + w.ms };
}

/** The limit of each window of a ledger, in its order (`null`: none). */
export type Limits = readonly (number | null)[];

/** An amount held for a request until it settles. */
export interface Reservation {
  readonly key: Deno.KvKey;
  readonly amount: number;
  /** The starts of the windows it was counted in. */
  readonly starts: readonly number[];
}

/** What {@link Ledger.reserve} grants: the reservation and the headers' window. */
export interface Grant {
  reservation: Reservation;
  window: WindowState | null;
}

/** Options for {@link Ledger}. */
export interface LedgerOptions {
  kv: Deno.Kv;
  clock: Clock;
  commits: GroupCommit;
  windows: readonly [LedgerWindow, LedgerWindow];
  /** The 429 for a reservation of `amount` that the (fullest) `window` cannot hold. */
  refusal(window: WindowState, amount: number, subject: string, now: number): ApiError;
}

/** `[start1, amount1, start2, amount2]`, as stored in KV. */
type Counts = [number, number, number, number];

type Change =
  | {
    kind: "reserve";
    key: Deno.KvKey;
    amount: number;
    limits: Limits;
    subject: string;
    resolve(grant: Grant): void;
    reject(error: unknown): void;
  }
  | {
    kind: "release";
    reservation: Reservation;
    /** Amount to add (negative: give back) in the reservation's windows. */
    delta: number;
    resolve(): void;
    reject(error: unknown): void;
  };

const EXPIRY_SLACK_MS = 60_000;

/** Amounts over two calendar windows, exact across every process on the KV. */
export class Ledger {
  readonly #accounts: Accounts<Counts, Change>;

  constructor(options: LedgerOptions) {
    const { windows, refusal } = options;
    this.#accounts = new Accounts<Counts, Change>({
      kv: options.kv,
      commits: options.commits,
      now: () => options.clock.now(),
      decide: (stored, batch, now) => decide(stored, batch, now, windows, refusal),
      expireIn: (counts, now) => windows[1].end(counts[2]) - now + EXPIRY_SLACK_MS,
      busy,
    });
  }

  /** Reserves `amount` in the entry at `key`: resolves with the reservation, or rejects with
   * the ledger's 429 when a window of `limits` cannot hold it. `subject` names the subject in
   * that error ("for this API key"). */
  reserve(key: Deno.KvKey, limits: Limits, amount: number, subject: string): Promise<Grant> {
    return new Promise<Grant>((resolve, reject) => {
      this.#accounts.submit(key, {
        kind: "reserve",
        key,
        amount,
        limits,
        subject,
        resolve,
        reject,
      });
    });
  }

  /** Resolves once every change submitted so far is committed (see {@link Accounts.idle}). */
  idle(): Promise<void> {
    return this.#accounts.idle();
  }

  /** Replaces a reservation by the amount the request used (in the windows it was made in; a
   * window that has ended since is left as it is). */
  settle(reservation: Reservation, used: number): Promise<void> {
    const delta = used - reservation.amount;
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

/** Decides a batch of one entry's changes in order: releases always apply, a reservation only
 * if every limited window can hold it. */
function decide(
  stored: Counts | null,
  batch: readonly Change[],
  now: number,
  windows: readonly [LedgerWindow, LedgerWindow],
  refusal: LedgerOptions["refusal"],
): Decision<Counts> {
  const counts = current(stored, now, windows);
  const outcomes: (() => void)[] = [];
  for (const change of batch) {
    if (change.kind === "release") {
      const { reservation, delta } = change;
      for (let i = 0; i < 2; i++) {
        if (reservation.starts[i] === counts[2 * i]) {
          counts[2 * i + 1] = Math.max(0, counts[2 * i + 1]! + delta);
        }
      }
      outcomes.push(() => change.resolve());
      continue;
    }
    const after = states(counts, windows, change.limits, change.amount);
    const full = blockingWindow(after.filter((w) => w.remaining < 0));
    if (full) {
      const error = refusal(full, change.amount, change.subject, now);
      outcomes.push(() => change.reject(error));
      continue;
    }
    counts[1] += change.amount;
    counts[3] += change.amount;
    const reservation: Reservation = {
      key: change.key,
      amount: change.amount,
      starts: [counts[0], counts[2]],
    };
    const window = after.length > 0 ? tightestWindow(after) : null;
    outcomes.push(() => change.resolve({ reservation, window }));
  }
  const changed = stored === null || counts.some((value, i) => value !== stored[i]);
  return { value: counts, changed, outcomes };
}

/** The amounts for the windows that contain `now`; a stored window that has ended counts 0.
 * (A stored window later than ours, from a process whose clock runs ahead, is kept.) */
function current(
  stored: Counts | null,
  now: number,
  windows: readonly [LedgerWindow, LedgerWindow],
): Counts {
  const counts: Counts = [windows[0].start(now), 0, windows[1].start(now), 0];
  if (stored === null) return counts;
  for (let i = 0; i < 2; i++) {
    if (stored[2 * i]! >= counts[2 * i]!) {
      counts[2 * i] = stored[2 * i]!;
      counts[2 * i + 1] = stored[2 * i + 1]!;
    }
  }
  return counts;
}

/** The limited windows' states after `amount` more; `remaining` is negative where it does not
 * fit. */
function states(
  counts: Counts,
  windows: readonly [LedgerWindow, LedgerWindow],
  limits: Limits,
  amount: number,
): WindowState[] {
  const out: WindowState[] = [];
  windows.forEach((w, i) => {
    const limit = limits[i];
    if (limit === null || limit === undefined) return;
    out.push({
      name: w.name,
      limit,
      remaining: limit - counts[2 * i + 1]! - amount,
      resetAt: w.end(counts[2 * i]!),
    });
  });
  return out;
}

function busy(): ApiError {
  return new ApiError(
    503,
    "server_error",
    "The ledger could not settle this request under heavy contention; try again.",
    { code: "rate_limiter_busy" },
  );
}
