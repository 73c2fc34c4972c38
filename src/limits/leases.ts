/**
 * Concurrency caps per key (DESIGN §8, `max_concurrent`): a request of a capped key holds a
 * slot, a lease with an expiry, from admission until it settles (its response, or its stream,
 * ended); the request that would hold one slot too many is refused with 429 at once. Leases live
 * in KV, one entry per key (`["leases", keyId] -> {leaseId: expiresAt}`), changed by optimistic
 * transactions (accounts.ts), so the cap holds across processes. A process renews the leases of
 * its running requests while they run; a process that dies stops renewing, and its slots come
 * back when their leases expire.
 */
import type { Clock } from "../clock.ts";
import { ApiError, rateLimited } from "../errors.ts";
import { Accounts, type Decision } from "./accounts.ts";
import type { GroupCommit } from "./group_commit.ts";

/** A key's leases: lease id -> expiry (clock ms). */
type Leases = Record<string, number>;

/** A slot held by a request. */
export interface Lease {
  readonly key: Deno.KvKey;
  readonly id: string;
}

/** Options for {@link ConcurrencyLeases}. */
export interface ConcurrencyLeasesOptions {
  kv: Deno.Kv;
  clock: Clock;
  commits: GroupCommit;
  /** How long a lease lasts unless renewed (default 60 s). */
  ttlMs?: number;
  /** New lease ids (default random UUIDs). */
  id?: () => string;
}

type Change =
  | { kind: "acquire"; lease: Lease; max: number; resolve(): void; reject(e: unknown): void }
  | { kind: "release"; lease: Lease; resolve(): void; reject(e: unknown): void }
  | { kind: "renew"; ids: readonly string[]; resolve(): void; reject(e: unknown): void };

const DEFAULT_TTL_MS = 60_000;

/** The concurrency slots of keys, shared by every process on the KV. */
export class ConcurrencyLeases {
  readonly #accounts: Accounts<Leases, Change>;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #id: () => string;
  /** This process's leases, by key entry, for renewal. */
  readonly #held = new Map<string, { key: Deno.KvKey; ids: Set<string> }>();
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: ConcurrencyLeasesOptions) {
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#id = options.id ?? (() => crypto.randomUUID());
    const ttl = this.#ttlMs;
    this.#accounts = new Accounts<Leases, Change>({
      kv: options.kv,
      commits: options.commits,
      now: () => options.clock.now(),
      decide: (value, batch, now) => decide(value, batch, now, ttl),
      expireIn: (leases, now) => Math.max(1000, Math.max(now, ...Object.values(leases)) - now),
      busy,
    });
  }

  /** Takes one of the key's `max` slots, or rejects with 429 when all are held. */
  acquire(keyId: string, max: number): Promise<Lease> {
    const lease: Lease = { key: ["leases", keyId], id: this.#id() };
    return new Promise<Lease>((resolve, reject) => {
      this.#accounts.submit(lease.key, {
        kind: "acquire",
        lease,
        max,
        resolve: () => {
          this.#hold(lease);
          resolve(lease);
        },
        reject,
      });
    });
  }

  /** Gives the slot back. */
  release(lease: Lease): Promise<void> {
    this.#drop(lease);
    return new Promise<void>((resolve, reject) => {
      this.#accounts.submit(lease.key, { kind: "release", lease, resolve, reject });
    });
  }

  /** Extends every lease this process holds by the lease time (run every third of it while
   * any is held). */
  renew(): Promise<void> {
    const renewals = [...this.#held.values()].map(({ key, ids }) =>
      new Promise<void>((resolve, reject) => {
        this.#accounts.submit(key, { kind: "renew", ids: [...ids], resolve, reject });
      })
    );
    return Promise.all(renewals).then(() => {});
  }

  /** Resolves once every acquire and release submitted so far is committed. */
  idle(): Promise<void> {
    return this.#accounts.idle();
  }

  /** Stops renewing (the leases still held expire on their own). */
  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #hold(lease: Lease): void {
    const id = lease.key.join("\u0000");
    const held = this.#held.get(id) ?? { key: lease.key, ids: new Set<string>() };
    held.ids.add(lease.id);
    this.#held.set(id, held);
    if (this.#timer === null) {
      const timer = setInterval(() => {
        this.renew().catch(() => {
          // A renewal that fails is tried again on the next tick; a lease lasts three ticks.
        });
      }, this.#ttlMs / 3);
      // Renewal never keeps the process alive.
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  #drop(lease: Lease): void {
    const id = lease.key.join("\u0000");
    const held = this.#held.get(id);
    if (!held) return;
    held.ids.delete(lease.id);
    if (held.ids.size === 0) this.#held.delete(id);
    if (this.#held.size === 0) this.close();
  }
}

/** Decides a batch of one key's lease changes in order, expired leases dropped first. */
function decide(
  stored: Leases | null,
  batch: readonly Change[],
  now: number,
  ttlMs: number,
): Decision<Leases> {
  const leases: Leases = {};
  for (const [id, expires] of Object.entries(stored ?? {})) if (expires > now) leases[id] = expires;
  const outcomes: (() => void)[] = [];
  for (const change of batch) {
    switch (change.kind) {
      case "acquire": {
        const held = Object.keys(leases).length;
        if (held >= change.max) {
          const error = refusal(change.max);
          outcomes.push(() => change.reject(error));
        } else {
          leases[change.lease.id] = now + ttlMs;
          outcomes.push(() => change.resolve());
        }
        break;
      }
      case "release":
        delete leases[change.lease.id];
        outcomes.push(() => change.resolve());
        break;
      case "renew":
        for (const id of change.ids) if (id in leases) leases[id] = now + ttlMs;
        outcomes.push(() => change.resolve());
        break;
    }
  }
  const before = stored ?? {};
  const changed = Object.keys(leases).length !== Object.keys(before).length ||
    Object.entries(leases).some(([id, expires]) => before[id] !== expires);
  return { value: leases, changed, outcomes };
}

function refusal(max: number): ApiError {
  return rateLimited(
    `Too many concurrent requests: this API key may run ${max} at once. Wait for one to finish.`,
    { "retry-after": "1" },
  );
}

function busy(): ApiError {
  return new ApiError(
    503,
    "server_error",
    "The concurrency limiter could not settle this request under heavy contention; try again.",
    { code: "rate_limiter_busy" },
  );
}
