/**
 * Following the request log as it is written, by every process on the same KV: a follower
 * lists the entries of the log's index of recent commits (see `TAIL_PREFIX`) since the last it
 * saw and reads their rows.
 */
import type { Clock } from "../clock.ts";
import { LOG_PREFIX, logRows, TAIL_PREFIX } from "./kv_sink.ts";
import type { LogRecord } from "./record.ts";

/** How far before the newest entry seen a follower looks again: a commit whose time was taken
 * before another's may become visible after it. */
const LOOK_BACK_MS = 10_000;

/** Reads the rows committed to the KV log from a moment on, each once, in commit order. */
export class LogTail {
  readonly #kv: Deno.Kv;
  /** When following began: rows committed before are not read. */
  readonly #since: number;
  /** KV's versionstamp when following began (an empty commit's), or `null` if that commit
   * failed: a row with a later one was committed after, even within the same millisecond. */
  readonly #start: Promise<string | null>;
  /** The newest commit time seen (at first: when following began). */
  #mark: number;
  /** Rows already read, by id, with their commit time (forgotten once out of the look-back). */
  readonly #seen = new Map<string, number>();

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#since = clock.now();
    this.#mark = this.#since;
    this.#start = kv.atomic().commit().then((r) => r.ok ? r.versionstamp : null, () => null);
  }

  /** The records of the rows committed since the last call (the first: since the tail was
   * made), oldest row first. */
  async next(): Promise<LogRecord[]> {
    const start = await this.#start;
    const from = this.#mark - LOOK_BACK_MS;
    const records: LogRecord[] = [];
    const entries = this.#kv.list<number>({
      start: [...TAIL_PREFIX, from],
      end: [...TAIL_PREFIX, Number.MAX_SAFE_INTEGER],
    });
    for await (const entry of entries) {
      const [, committed, id] = entry.key as [string, number, string];
      const before = start !== null ? entry.versionstamp < start : committed < this.#since;
      if (before || this.#seen.has(id)) continue;
      this.#seen.set(id, committed);
      if (committed > this.#mark) this.#mark = committed;
      const key = [...LOG_PREFIX, entry.value, id];
      for await (const row of logRows(this.#kv.list({ prefix: key }))) records.push(...row.records);
      // A row a process of the version before wrote, in one value.
      const legacy = await this.#kv.get(key);
      if (legacy.value !== null) {
        for await (const row of logRows([legacy as Deno.KvEntry<unknown>])) {
          records.push(...row.records);
        }
      }
    }
    for (const [id, committed] of this.#seen) {
      if (committed < this.#mark - LOOK_BACK_MS) this.#seen.delete(id);
    }
    return records;
  }
}
