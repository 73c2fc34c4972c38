/**
 * Many time limits on one repeating timer. Deno's `setTimeout` builds a Node-style Timeout
 * object for every call (about 1 KB of garbage and a few µs for each request that set one);
 * here the limits of the requests in flight are checked on each tick instead, so a limit fires
 * at most one tick late. The timer runs while limits are set, and stops at the first tick
 * that finds none.
 */

import { EntryList, type ListEntry } from "../entry_list.ts";

/** One time limit: `fire` runs once `at` (a `performance.now()` time) has passed. */
export class Expiry {
  /** When it fires; `Infinity` holds it (see {@link Expiries.after}). */
  at: number;
  readonly #owner: Expiries;
  readonly #fire: () => void;
  /** Its place among its owner's limits (set by the owner). */
  entry: ListEntry<Expiry> | null = null;

  constructor(owner: Expiries, at: number, fire: () => void) {
    this.#owner = owner;
    this.at = at;
    this.#fire = fire;
  }

  /** Moves the limit to `ms` from now. */
  restart(ms: number): void {
    this.at = performance.now() + ms;
  }

  /** Stops it: `fire` will not run. */
  clear(): void {
    this.#owner.delete(this);
  }

  /** Runs `fire` (once: the limit is cleared first). */
  expire(): void {
    this.clear();
    this.#fire();
  }
}

/** The time limits of one kind of work, checked every `tickMs`. */
export class Expiries {
  readonly #active = new EntryList<Expiry>();
  readonly #tickMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(tickMs: number) {
    this.#tickMs = tickMs;
  }

  /** The tick for limits of about `ms`: a twentieth of it, between 5 and 250 ms. */
  static tickFor(ms: number): number {
    return Math.min(250, Math.max(5, Math.floor(ms / 20)));
  }

  /** Calls `fire` once `ms` have passed, unless the limit is cleared first. */
  after(ms: number, fire: () => void): Expiry {
    const expiry = new Expiry(this, performance.now() + ms, fire);
    expiry.entry = this.#active.add(expiry);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#check(), this.#tickMs);
    }
    return expiry;
  }

  /** Stops watching `expiry`. */
  delete(expiry: Expiry): void {
    if (expiry.entry === null) return;
    this.#active.delete(expiry.entry);
    expiry.entry = null;
  }

  #check(): void {
    // The timer stops at a tick that finds nothing to watch, not as the last limit clears:
    // under load the set empties and refills between requests, and a timer started per request
    // is what this class is for avoiding.
    if (this.#active.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    for (const expiry of this.#active.values()) if (now >= expiry.at) expiry.expire();
  }
}
