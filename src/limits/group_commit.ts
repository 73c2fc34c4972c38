/**
 * Group commit (DESIGN §8): the counter writes of every subject that reach the limiter in the
 * same event-loop turn, and those that arrive while a commit runs, go to KV in one atomic
 * operation, so that a thousand clients cost one commit (one fsync on a local file) instead of
 * a thousand.
 *
 * Each write is optimistic: it carries the checks that its decision rests on (the counter's
 * versionstamp, and a key record's). Deno KV says only that some check of an operation failed,
 * not which; after a failed commit the checked keys are read again (in `getMany`s of ten), the
 * writes whose keys changed are answered `conflict` with what was read (their subjects decide
 * again on it, with no read of their own), and the others go, unchanged and first, into the
 * next commit.
 */
import { isKvBusy } from "../kv/busy.ts";
import { timed } from "../kv/timed.ts";

/** Deno KV's limits per atomic operation and per `getMany`. */
const MAX_CHECKS = 100;
const MAX_MUTATIONS = 1000;
const MAX_READ = 10;

/** One subject's decision: set `key` to `value` if every check still holds. */
export interface CounterWrite {
  checks: Deno.AtomicCheck[];
  key: Deno.KvKey;
  value: unknown;
  expireIn: number;
}

/** How a write ended: committed (with the commit's versionstamp); refused by a check that no
 * longer holds (`conflict`, with the checked keys' entries as read after the failure, in the
 * order of the write's checks); or not tried because KV was busy (another process held the
 * lock). */
export type WriteOutcome =
  | { kind: "committed"; versionstamp: string }
  | { kind: "conflict"; entries: Deno.KvEntryMaybe<unknown>[] }
  | { kind: "busy" };

interface Pending {
  write: CounterWrite;
  resolve(outcome: WriteOutcome): void;
  reject(error: unknown): void;
}

/** Commits the writes submitted to it in groups, one atomic operation per group. */
export class GroupCommit {
  readonly #kv: Deno.Kv;
  #queue: Pending[] = [];
  #scheduled = false;
  #running = false;

  readonly #onCommit: ((seconds: number) => void) | undefined;

  /** `onCommit` is told how long each commit took, in seconds (the KV latency metric). */
  constructor(kv: Deno.Kv, onCommit?: (seconds: number) => void) {
    this.#kv = kv;
    this.#onCommit = onCommit;
  }

  /** Whether a commit is under way or due (writes submitted now would wait for it). */
  get busy(): boolean {
    return this.#scheduled || this.#running;
  }

  /** Commits `write` with the others of this turn; settles once its group's commit did. With
   * `atOnce`, when no commit is under way or due, it is committed at once, alone. */
  submit(write: CounterWrite, atOnce = false): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (this.#scheduled || this.#running) return;
      if (atOnce) {
        this.#drain();
      } else {
        this.#scheduled = true;
        // One turn of the event loop, so that every subject woken in this turn joins.
        setImmediate(() => {
          this.#scheduled = false;
          this.#drain();
        });
      }
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) await this.#commit(this.#take());
    } finally {
      this.#running = false;
    }
  }

  /** The next group: queued writes, in order, up to what one atomic operation may hold. */
  #take(): Pending[] {
    let checks = 0;
    let n = 0;
    for (const p of this.#queue) {
      const c = p.write.checks.length;
      if (n > 0 && (checks + c > MAX_CHECKS || n + 1 > MAX_MUTATIONS)) break;
      checks += c;
      n++;
    }
    return this.#queue.splice(0, n);
  }

  async #commit(group: Pending[]): Promise<void> {
    const op = this.#kv.atomic();
    for (const { write } of group) {
      for (const check of write.checks) op.check(check);
      op.set(write.key, write.value, { expireIn: write.expireIn });
    }
    let result: Deno.KvCommitResult | Deno.KvCommitError;
    try {
      result = await timed(op.commit(), this.#onCommit);
    } catch (e) {
      for (const p of group) isKvBusy(e) ? p.resolve({ kind: "busy" }) : p.reject(e);
      return;
    }
    if (result.ok) {
      const outcome: WriteOutcome = { kind: "committed", versionstamp: result.versionstamp };
      for (const p of group) p.resolve(outcome);
      return;
    }
    let entries: Deno.KvEntryMaybe<unknown>[][];
    try {
      entries = await this.#reread(group);
    } catch (e) {
      for (const p of group) isKvBusy(e) ? p.resolve({ kind: "busy" }) : p.reject(e);
      return;
    }
    const retry: Pending[] = [];
    group.forEach((p, i) => {
      const read = entries[i]!;
      const changed = p.write.checks.some((check, j) =>
        read[j]!.versionstamp !== check.versionstamp
      );
      if (changed) p.resolve({ kind: "conflict", entries: read });
      else retry.push(p);
    });
    // A failed commit had a failed check, which a later read shows; should none show (it
    // cannot), every write decides again rather than loop.
    if (retry.length === group.length) {
      group.forEach((p, i) => p.resolve({ kind: "conflict", entries: entries[i]! }));
      return;
    }
    this.#queue.unshift(...retry);
  }

  /** For each write of `group`, the current entries of the keys it checks. */
  async #reread(group: Pending[]): Promise<Deno.KvEntryMaybe<unknown>[][]> {
    const keys = group.flatMap((p) => p.write.checks.map((c) => c.key));
    const reads: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
    for (let i = 0; i < keys.length; i += MAX_READ) {
      reads.push(this.#kv.getMany(keys.slice(i, i + MAX_READ)));
    }
    const all = (await Promise.all(reads)).flat();
    let i = 0;
    return group.map((p) => p.write.checks.map(() => all[i++]!));
  }
}
