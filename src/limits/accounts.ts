/**
 * KV entries changed only by optimistic transactions, one queue per entry (the token ledger's
 * counters, the concurrency leases). The changes of one entry that wait together in a process
 * are decided in order against its current value and committed at once, through the group
 * commit; if another process changed the entry meanwhile, the batch is decided again on the
 * value read after the failed commit. A process that wrote an entry last knows its value and
 * skips the read, and one that never saw the entry takes it to be absent, which the commit's
 * check proves (a batch that would write nothing, a refusal, reads first: only a commit proves a
 * copy current).
 */
import type { ApiError } from "../errors.ts";
import { kvBackoff, retryWhileBusy } from "../kv/busy.ts";
import type { GroupCommit } from "./group_commit.ts";
import { TurnEnd } from "./turn.ts";

/** A change waiting for its entry's next commit. */
export interface Pending {
  reject(error: unknown): void;
}

/** What a batch decided: the entry's new value, and what to tell each change once it holds. */
export interface Decision<V> {
  value: V;
  /** Whether `value` differs from the value decided against (no write otherwise). */
  changed: boolean;
  /** Run in order once the value is committed (or needs none). */
  outcomes: (() => void)[];
}

/** How an {@link Accounts} store decides. */
export interface AccountsOptions<V, C extends Pending> {
  kv: Deno.Kv;
  commits: GroupCommit;
  /** Decides `batch` in order against the entry's `value` (`null`: none stored) at `now`. */
  decide(value: V | null, batch: readonly C[], now: number): Decision<V>;
  /** The new value's time to live in KV, in milliseconds. */
  expireIn(value: V, now: number): number;
  /** The error for a batch that could not be committed within the budget. */
  busy(): ApiError;
  now(): number;
  /** Entries kept in memory before idle ones are dropped. */
  maxAccounts?: number;
}

/** How long one batch keeps trying against other processes before it fails with `busy`. */
const SETTLE_BUDGET_MS = 5000;

class Account<V, C> {
  known = false;
  /** Whether the next decision may take the entry to be absent instead of reading it. */
  guess = true;
  value: V | null = null;
  versionstamp: string | null = null;
  queue: C[] = [];
  running = false;

  constructor(readonly key: Deno.KvKey) {}
}

/** Entries of one kind, each changed by its own queue of batched optimistic transactions. */
export class Accounts<V, C extends Pending> {
  readonly #options: AccountsOptions<V, C>;
  readonly #maxAccounts: number;
  readonly #accounts = new Map<string, Account<V, C>>();
  /** The end of this event-loop turn, which every account about to apply waits for together. */
  readonly #turn = new TurnEnd();
  /** Accounts whose changes are being decided and committed, and who waits for none to be. */
  #running = 0;
  #idle: (() => void)[] = [];

  constructor(options: AccountsOptions<V, C>) {
    this.#options = options;
    this.#maxAccounts = options.maxAccounts ?? 10_000;
  }

  /** Queues `change` for the entry at `key`; its outcome runs once the batch is decided. */
  submit(key: Deno.KvKey, change: C): void {
    const id = key.join("\u0000");
    let account = this.#accounts.get(id);
    if (!account) {
      if (this.#accounts.size >= this.#maxAccounts) {
        for (const [aid, a] of this.#accounts) {
          if (!a.running && a.queue.length === 0) this.#accounts.delete(aid);
        }
      }
      account = new Account<V, C>(key);
      this.#accounts.set(id, account);
    }
    account.queue.push(change);
    if (!account.running) this.#run(account);
  }

  /** Resolves once no change is waiting or being committed (each batch gives up within its
   * budget), so that a process that stops loses none. */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #run(account: Account<V, C>): Promise<void> {
    account.running = true;
    this.#running++;
    try {
      while (account.queue.length > 0) {
        // One turn of the event loop, so that the changes made in this turn join the batch.
        await this.#turn.wait();
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
      if (--this.#running === 0) {
        const waiting = this.#idle;
        this.#idle = [];
        for (const resolve of waiting) resolve();
      }
    }
  }

  async #apply(account: Account<V, C>, batch: C[]): Promise<void> {
    const { kv, commits } = this.#options;
    const giveUpAt = performance.now() + SETTLE_BUDGET_MS;
    let fresh = false;
    for (let attempt = 1;; attempt++) {
      if (!account.known && account.guess) {
        account.guess = false;
        account.value = null;
        account.versionstamp = null;
        account.known = true;
      } else if (!account.known) {
        const entry = await retryWhileBusy(() => kv.get<V>(account.key));
        account.value = entry.value;
        account.versionstamp = entry.versionstamp;
        account.known = true;
        fresh = true;
      }
      const now = this.#options.now();
      const decision = this.#options.decide(account.value, batch, now);
      if (!decision.changed) {
        // Nothing to commit proves the value current: a refusal decided against this process's
        // copy (which another process may have lowered since) is decided again on a fresh read.
        if (!fresh) {
          account.known = false;
          continue;
        }
        for (const done of decision.outcomes) done();
        return;
      }
      const outcome = await commits.submit({
        checks: [{ key: account.key, versionstamp: account.versionstamp }],
        key: account.key,
        value: decision.value,
        expireIn: this.#options.expireIn(decision.value, now),
      });
      if (outcome.kind === "committed") {
        account.value = decision.value;
        account.versionstamp = outcome.versionstamp;
        for (const done of decision.outcomes) done();
        return;
      }
      if (performance.now() > giveUpAt) throw this.#options.busy();
      if (outcome.kind === "conflict") {
        // Another process changed the entry: decide again on what was read after the failure,
        // at once the first time (the conflict of a guess is no contention).
        const entry = outcome.entries[0]!;
        account.value = entry.value as V | null;
        account.versionstamp = entry.versionstamp;
        fresh = true;
        if (attempt > 1) await kvBackoff(attempt - 1);
        continue;
      }
      // Another process held the lock: read and decide again.
      account.known = false;
      await kvBackoff(attempt);
    }
  }
}
