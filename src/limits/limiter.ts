/**
 * Exact rate limits on Deno KV, shared by every process and machine on the same KV: one entry
 * per (scope, subject) holding both windows, updated by optimistic transactions batched per
 * subject and committed together per event-loop turn. The design (storage, exactness, cost) is in
 * docs/architecture.md, "How the limits stay exact".
 */
import { type Caller, disabledKey, unknownKey, verifyKey } from "../auth/authenticate.ts";
import { type KeyEntry, keyRecordKey, type KeyStore } from "../auth/keys.ts";
import { ANONYMOUS, type KeyRecord, type Principal } from "../auth/principal.ts";
import type { Clock } from "../clock.ts";
import type { LimitsConfig, LimitScope, WindowLimit } from "../config/types.ts";
import { ApiError, rateLimited } from "../errors.ts";
import { kvBackoff, retryWhileBusy } from "../kv/busy.ts";
import { GroupCommit } from "./group_commit.ts";
import { ipSubject } from "./subject.ts";
import { TurnEnd } from "./turn.ts";
import {
  blockingWindow,
  isUnlimited,
  limitsFor,
  retryAfterSeconds,
  setRateLimitHeaders,
  tightestWindow,
  WINDOWS,
  type WindowState,
} from "./windows.ts";

/** `[minuteStart, minuteCount, dayStart, dayCount]`, as stored in KV. */
type Counts = [number, number, number, number];

/** What the limiter decided for an admitted request. */
export interface Admission {
  /** Who the request is from, with the key record proven current. */
  principal: Principal;
  /** The window for the response headers, or `null` when the scope is unlimited. */
  window: WindowState | null;
}

/** Options for {@link RateLimiter}. */
export interface RateLimiterOptions {
  kv: Deno.Kv;
  clock: Clock;
  limits: LimitsConfig;
  keys: KeyStore;
  /** Leading bits of an IPv6 address that count as one anonymous client (default 64). */
  ipv6Prefix?: number;
  /** The group commit its counter writes go through (default: its own). */
  commits?: GroupCommit;
  /** Groups kept in memory before idle ones are dropped. */
  maxGroups?: number;
}

const EXPIRY_SLACK_MS = 60_000;
/** The share of a window's limit, and the least number of requests, that must be left for
 * {@link RateLimiter.likely} to call an admission likely. */
const LIKELY_MARGIN = 0.1;
const LIKELY_MARGIN_MIN = 2;
/** How long one batch keeps trying against other processes before answering 503. (A count
 * of attempts is no good bound: under saturation a process can lose dozens of races in a
 * row, and then win.) */
const SETTLE_BUDGET_MS = 5000;

interface Waiter {
  resolve(admission: Admission): void;
  reject(error: unknown): void;
}

interface Block {
  until: number;
  window: WindowState;
  /** The key record version the block was decided under (`null` for IPs). */
  keyVersion: string | null;
}

/** The limiter's state for one (scope, subject) in this process. */
class Group {
  /** Whether `counts`/`versionstamp` mirror a KV state this process read or wrote. */
  known = false;
  /** Whether the next decision may take the counter to be absent instead of reading it (a
   * subject new to this process; see `#settle`). */
  guess = true;
  counts: Counts | null = null;
  versionstamp: string | null = null;
  queue: Waiter[] = [];
  /** Requests of the batch being settled. */
  settling = 0;
  running = false;
  block: Block | null = null;

  constructor(
    readonly scope: LimitScope,
    readonly counterKey: Deno.KvKey,
    /** For key subjects: the newest record known. */
    public key: KeyEntry | null,
  ) {}

  /** Takes a caller's copy of the key record if it is newer than the group's. */
  offer(entry: KeyEntry): void {
    if (this.key === null || entry.versionstamp > this.key.versionstamp) this.key = entry;
  }

  idle(now: number): boolean {
    return !this.running && this.queue.length === 0 &&
      (this.block === null || this.block.until <= now);
  }
}

/** Per-IP and per-key request limits over fixed minute and day windows (DESIGN §8). */
export class RateLimiter {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #limits: LimitsConfig;
  readonly #keys: KeyStore;
  readonly #maxGroups: number;
  readonly #groups = new Map<string, Group>();
  readonly #commits: GroupCommit;
  readonly #ipv6Prefix: number;
  /** Groups deciding a batch now. */
  #running = 0;
  /** The end of this event-loop turn, which every group about to decide waits for together. */
  readonly #turn = new TurnEnd();

  constructor(options: RateLimiterOptions) {
    this.#kv = options.kv;
    this.#commits = options.commits ?? new GroupCommit(options.kv);
    this.#ipv6Prefix = options.ipv6Prefix ?? 64;
    this.#clock = options.clock;
    this.#limits = options.limits;
    this.#keys = options.keys;
    this.#maxGroups = options.maxGroups ?? 100_000;
  }

  /**
   * Counts a request of `caller` (from `ip`; an anonymous IPv6 caller counts by its prefix, see
   * subject.ts) against `scope`: resolves with the principal and the headers' window, or
   * rejects with 429 (over a limit) or 401 (a key revoked or disabled since it was last seen).
   * With `atOnce` (for a request {@link likely} admitted) its commit starts at once, not after the
   * turn in which other requests could join it: an idle process has none to wait for.
   */
  async admit(
    scope: LimitScope,
    caller: Caller,
    from: string,
    atOnce = false,
  ): Promise<Admission> {
    const ip = caller.kind === "key" ? from : ipSubject(from, this.#ipv6Prefix);
    let entry = caller.kind === "key" ? caller.entry : null;
    let verified = caller.kind === "anonymous" || caller.verified;
    const id = groupId(scope, entry, ip);
    let group = this.#groups.get(id);
    if (group && entry) {
      group.offer(entry);
      entry = group.key;
    }
    if (isUnlimited(this.#limitsOf(scope, entry))) {
      if (!entry) return { principal: ANONYMOUS, window: null };
      if (!verified) {
        entry = await verifyKey(this.#keys, entry);
        verified = true;
        group?.offer(entry);
      }
      if (isUnlimited(this.#limitsOf(scope, entry))) {
        return { principal: { kind: "key", key: entry.record }, window: null };
      }
    }
    if (group?.block) {
      const now = this.#clock.now();
      const block = group.block;
      if (now >= block.until) {
        group.block = null;
      } else if (!entry) {
        throw this.#refusal(scope, block.window, now, false);
      } else {
        const fresh = verified ? entry : await verifyKey(this.#keys, entry);
        if (fresh.versionstamp === block.keyVersion) {
          throw this.#refusal(scope, block.window, now, true);
        }
        // The key record changed (perhaps new limits): decide again against KV.
        group.offer(fresh);
        group.block = null;
      }
    }
    if (!group) {
      const counterKey = ["ratelimit", scope, entry ? "key" : "ip", entry ? entry.record.id : ip];
      group = new Group(scope, counterKey, entry);
      this.#insert(id, group);
    }
    const target = group;
    return await new Promise<Admission>((resolve, reject) => {
      target.queue.push({ resolve, reject });
      if (!target.running) this.#run(target, atOnce);
    });
  }

  /**
   * The principal a request of `caller` will almost surely be admitted as, or `null` when that
   * is not known or not worth knowing. It is known when this process holds the subject's counter
   * as it last read or wrote it, no block is noted, a key caller brings the record the counter
   * was last committed with, and every limited window has at least a tenth of its limit (and two
   * requests) left besides the requests of the subject this process is still settling. It is
   * worth knowing only while no batch is being decided and no commit is under way (an idle
   * process: under load requests wait for those anyway, and overlapping costs a little CPU).
   * {@link admit} still decides: only other processes taking that margin since this one's last
   * write, or a key changed meanwhile, can make it refuse.
   */
  likely(scope: LimitScope, caller: Caller, from: string): Principal | null {
    if (this.#running > 0 || this.#commits.busy) return null;
    const entry = caller.kind === "key" ? caller.entry : null;
    const id = groupId(scope, entry, entry ? from : ipSubject(from, this.#ipv6Prefix));
    const group = this.#groups.get(id);
    if (group === undefined || !group.known || group.counts === null) return null;
    if (entry && group.key?.versionstamp !== entry.versionstamp) return null;
    const now = this.#clock.now();
    if (group.block !== null && group.block.until > now) return null;
    const limits = this.#limitsOf(scope, group.key);
    const counts = current(group.counts, now);
    const waiting = group.queue.length + group.settling + 1;
    for (const [i, w] of WINDOWS.entries()) {
      const limit = limits[w.field];
      if (limit === null) continue;
      const margin = Math.max(LIKELY_MARGIN_MIN, Math.ceil(limit * LIKELY_MARGIN));
      if (limit - counts[2 * i + 1]! - waiting < margin) return null;
    }
    return group.key ? { kind: "key", key: group.key.record } : ANONYMOUS;
  }

  #limitsOf(scope: LimitScope, entry: KeyEntry | null): WindowLimit {
    return limitsFor(this.#limits, scope, entry?.record ?? null);
  }

  #insert(id: string, group: Group): void {
    if (this.#groups.size >= this.#maxGroups) {
      const now = this.#clock.now();
      for (const [gid, g] of this.#groups) if (g.idle(now)) this.#groups.delete(gid);
    }
    this.#groups.set(id, group);
  }

  async #run(group: Group, atOnce: boolean): Promise<void> {
    group.running = true;
    this.#running++;
    try {
      while (group.queue.length > 0) {
        if (!atOnce) await this.#turn.wait();
        const batch = group.queue;
        group.queue = [];
        group.settling = batch.length;
        const first = atOnce;
        atOnce = false;
        try {
          await this.#settle(group, batch, first);
        } catch (e) {
          group.known = false;
          for (const waiter of batch) waiter.reject(e);
        } finally {
          group.settling = 0;
        }
      }
    } finally {
      group.running = false;
      this.#running--;
    }
  }

  /** Decides one batch: grants what the windows allow in one commit, refuses the rest. */
  async #settle(group: Group, batch: Waiter[], atOnce: boolean): Promise<void> {
    let fresh = false;
    const giveUpAt = performance.now() + SETTLE_BUDGET_MS;
    for (let attempt = 1;; attempt++) {
      if (!group.known && group.guess) {
        // A subject this process has not seen is taken to have no counter yet: the commit's
        // check (versionstamp null) proves it, and a counter that does exist comes back with
        // the conflict. A new client costs one shared commit and no read.
        group.guess = false;
        group.counts = null;
        group.versionstamp = null;
        group.known = true;
      } else if (!group.known) {
        const failure = await retryWhileBusy(() => this.#read(group));
        if (failure) {
          for (const waiter of batch) waiter.reject(failure);
          return;
        }
        fresh = true;
      }
      const now = this.#clock.now();
      const limits = this.#limitsOf(group.scope, group.key);
      const principal: Principal = group.key ? { kind: "key", key: group.key.record } : ANONYMOUS;
      // A key's limits come from its record, so only a record proven current may refuse or
      // waive: a commit (below) proves it; otherwise read first.
      const unproven = group.key !== null && !fresh;
      if (isUnlimited(limits)) {
        if (unproven) {
          group.known = false;
          continue;
        }
        for (const waiter of batch) waiter.resolve({ principal, window: null });
        return;
      }
      const counts = current(group.counts, now);
      let available = Infinity;
      for (const [i, w] of WINDOWS.entries()) {
        const limit = limits[w.field];
        if (limit !== null) available = Math.min(available, limit - counts[2 * i + 1]!);
      }
      const grant = Math.max(0, Math.min(batch.length, available));
      if (grant === 0) {
        if (unproven) {
          group.known = false;
          continue;
        }
        this.#refuse(group, batch, states(counts, limits, 0), now);
        return;
      }
      const next: Counts = [counts[0], counts[1] + grant, counts[2], counts[3] + grant];
      const checks: Deno.AtomicCheck[] = [
        { key: group.counterKey, versionstamp: group.versionstamp },
      ];
      if (group.key) {
        checks.push({ key: keyRecordKey(group.key.hash), versionstamp: group.key.versionstamp });
      }
      const outcome = await this.#commits.submit({
        checks,
        key: group.counterKey,
        value: next,
        expireIn: next[2] + WINDOWS[1].ms - now + EXPIRY_SLACK_MS,
      }, atOnce && attempt === 1);
      if (outcome.kind === "conflict") {
        // Another process changed the counter (or the key) since we read it: decide again on
        // the entries read after the failed commit, at once the first time (the conflict of a
        // guess is no contention), after a short jittered pause from then on.
        const failure = this.#adopt(group, outcome.entries[0]!, outcome.entries[1]);
        if (failure) {
          for (const waiter of batch) waiter.reject(failure);
          return;
        }
        fresh = true;
        if (performance.now() > giveUpAt) throw busy();
        if (attempt > 1) await kvBackoff(attempt - 1);
        continue;
      }
      if (outcome.kind === "busy") {
        // Another process held the lock: read again and decide again, after a short pause.
        group.known = false;
        if (performance.now() > giveUpAt) throw busy();
        await kvBackoff(attempt);
        continue;
      }
      group.counts = next;
      group.versionstamp = outcome.versionstamp;
      // Every window counts the batch's requests alike, so the tightest one is the same for
      // each; request i of the batch leaves it i fewer.
      const tightest = tightestWindow(states(counts, limits, 1));
      for (let i = 0; i < grant; i++) {
        const window = { ...tightest, remaining: tightest.remaining - i };
        batch[i]!.resolve({ principal, window });
      }
      const after = states(next, limits, 0);
      if (blockingWindow(after)) this.#refuse(group, batch.slice(grant), after, now);
      if (group.key) this.#keys.noteUse(group.key, now);
      return;
    }
  }

  /** Reads the counter (and the key record) from KV; returns the error for the batch when
   * the key is gone or disabled. */
  async #read(group: Group): Promise<ApiError | null> {
    if (group.key === null) return this.#adopt(group, await this.#kv.get<Counts>(group.counterKey));
    const [counter, key] = await this.#kv.getMany<[Counts, KeyRecord]>([
      group.counterKey,
      keyRecordKey(group.key.hash),
    ]);
    return this.#adopt(group, counter, key);
  }

  /** Takes KV's `counter` entry (and, for a key, its record `key`) as the group's state; returns
   * the error for the batch when the key is gone or disabled. */
  #adopt(
    group: Group,
    counter: Deno.KvEntryMaybe<unknown>,
    key?: Deno.KvEntryMaybe<unknown>,
  ): ApiError | null {
    group.counts = counter.value as Counts | null;
    group.versionstamp = counter.versionstamp;
    group.known = true;
    if (group.key === null) return null;
    const hash = group.key.hash;
    if (!key || key.value === null || key.versionstamp === null) {
      this.#keys.forget(hash);
      group.known = false;
      return unknownKey();
    }
    const record = key.value as KeyRecord;
    group.key = { hash, record, versionstamp: key.versionstamp };
    this.#keys.remember(group.key);
    if (record.disabled) {
      group.known = false;
      return disabledKey();
    }
    return null;
  }

  /** Refuses waiters with 429 and notes the block so later requests cost no KV write. */
  #refuse(group: Group, waiters: Waiter[], windows: WindowState[], now: number): void {
    const window = blockingWindow(windows);
    if (window === null) return;
    group.block = { until: window.resetAt, window, keyVersion: group.key?.versionstamp ?? null };
    for (const waiter of waiters) {
      waiter.reject(this.#refusal(group.scope, window, now, group.key !== null));
    }
  }

  #refusal(scope: LimitScope, window: WindowState, now: number, keyed: boolean): ApiError {
    const headers = new Headers();
    setRateLimitHeaders(headers, { ...window, remaining: 0 }, now);
    const retryAfter = retryAfterSeconds(window, now);
    headers.set("retry-after", String(retryAfter));
    const what = SCOPE_NAMES[scope];
    const subject = keyed
      ? "for this API key"
      : "per IP address for anonymous callers (an API key gets higher limits)";
    return rateLimited(
      `Rate limit reached for ${what}: ${window.limit} per ${window.name} ${subject}. ` +
        `Try again in ${retryAfter} s.`,
      headers,
    );
  }
}

const SCOPE_NAMES: Record<LimitScope, string> = {
  chat: "chat completions",
  images: "image generations",
  other: "requests",
};

/** The key of a subject's group: its key's id, or for anonymous callers the IP (or prefix). */
function groupId(scope: LimitScope, entry: KeyEntry | null, ip: string): string {
  return entry ? `k\u0000${scope}\u0000${entry.record.id}` : `a\u0000${scope}\u0000${ip}`;
}

/** The counts for the windows that contain `now`; a stored window that has ended counts 0.
 * (A stored window later than ours, from a process whose clock runs ahead, is kept.) */
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

/** The limited windows' states after `extra` more requests. */
function states(counts: Counts, limits: WindowLimit, extra: number): WindowState[] {
  const out: WindowState[] = [];
  for (const [i, w] of WINDOWS.entries()) {
    const limit = limits[w.field];
    if (limit === null) continue;
    const start = counts[2 * i]!;
    out.push({
      name: w.name,
      limit,
      remaining: Math.max(0, limit - counts[2 * i + 1]! - extra),
      resetAt: start + w.ms,
    });
  }
  return out;
}

function busy(): ApiError {
  return new ApiError(
    503,
    "server_error",
    "The rate limiter could not settle this request under heavy contention; try again.",
    { code: "rate_limiter_busy" },
  );
}
