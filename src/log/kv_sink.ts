import { type Clock, systemClock } from "../clock.ts";
import { timed } from "../kv/timed.ts";
import { isKvBusy, retryWhileBusy } from "../kv/busy.ts";
import type { LogSink } from "./logger.ts";
import { type LogRecord, truncateText } from "./record.ts";
import { type CounterSums, mergeSums, usageSums, utcDay } from "./usage.ts";
import { checkSums } from "./checks.ts";
import { sweepCounters } from "./usage_sweep.ts";
import { cutParts } from "../kv/parts.ts";
import { concatBytes } from "../http/bytes.ts";
import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * Key prefix of the log in KV. Records are stored in rows of up to {@link ROW_RECORDS}, every
 * record of a row having arrived in the same second: the records' JSON lines as written to
 * stdout, joined by newlines, as UTF-8 compressed with raw deflate (a sixth of the bytes, at
 * ~1.5 µs a record), in parts (`kv/parts.ts`):
 * `["logs", <second, ms>, <row id>, <parts>, <n>] -> bytes`. One row per second and flush,
 * holding text already serialised for stdout, rather than one structured KV value per request,
 * keeps the log's share of a request's CPU small.
 */
export const LOG_PREFIX = ["logs"] as const;

/** Key prefix of the index of recently committed rows, for followers of the log (`tail.ts`):
 * `["logtail", <commit ms>, <row id>] -> <the row's bucket>`, kept {@link TAIL_KEEP_MS}. */
export const TAIL_PREFIX = ["logtail"] as const;
const TAIL_KEEP_MS = 5 * 60_000;

/** A row as written before its text was kept in parts (one `{lines}` value under
 * `["logs", <second>, <row id>]`), still read until it expires. */
interface LegacyRow {
  lines: string;
}

/** A row of the log, as read back. */
export interface StoredRow {
  /** The second its records arrived in (ms). */
  bucket: number;
  id: string;
  records: LogRecord[];
}

/** The rows of log entries listed in key order, forwards or in reverse: each row's parts joined
 * into its records. A row missing a part (listed while it expired) is left out. */
export async function* logRows(
  entries: AsyncIterable<Deno.KvEntry<unknown>> | Iterable<Deno.KvEntry<unknown>>,
): AsyncGenerator<StoredRow> {
  let open: { bucket: number; id: string; parts: Uint8Array[]; got: number } | null = null;
  const close = (): StoredRow | null => {
    const row = open;
    open = null;
    if (row === null || row.got !== row.parts.length) return null;
    let text: string;
    try {
      text = decoder.decode(inflateRawSync(concatBytes(row.parts)));
    } catch {
      return null;
    }
    return { bucket: row.bucket, id: row.id, records: textRecords(text) };
  };
  for await (const { key, value } of entries) {
    const bucket = key[1] as number;
    const id = key[2] as string;
    if (key.length === 3) {
      const done = close();
      if (done) yield done;
      const lines = (value as LegacyRow | null)?.lines;
      if (typeof lines === "string") yield { bucket, id, records: textRecords(lines) };
      continue;
    }
    const count = key[3] as number;
    const n = key[4] as number;
    if (open === null || open.bucket !== bucket || open.id !== id || open.parts.length !== count) {
      const done = close();
      if (done) yield done;
      open = { bucket, id, parts: new Array(count), got: 0 };
    }
    if (value instanceof Uint8Array && n >= 0 && n < count && !open.parts[n]) {
      open.parts[n] = value;
      open.got++;
    }
  }
  const done = close();
  if (done) yield done;
}

/** The records of a row's text: one JSON record per line. */
function textRecords(text: string): LogRecord[] {
  return text.split("\n").map((line) => JSON.parse(line) as LogRecord);
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The width of a row's time bucket. */
export const BUCKET_MS = 1000;
/** At most this many records per row. */
export const ROW_RECORDS = 100;
/** Characters of JSON per row at most. */
const ROW_BYTES = 30_000;
/** Rows per commit at most, within KV's limit on an atomic operation's size. */
const ROWS_PER_COMMIT = 8;
/** Parts of rows per commit at most: their keys (~71 bytes each) stay within KV's 80 KiB of keys
 * per atomic operation. */
const PARTS_PER_COMMIT = 512;
/** KV's limit on the mutations of one atomic operation: a commit's rows, their tail entries and
 * their counters stay within it. */
const MAX_MUTATIONS = 1000;

/** The time bucket (a row's key part) of a record's arrival time. */
export function logBucket(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_MS;
}

/** Days the usage counters are kept by default (the default of `logs.usage_retention_days`). */
export const DEFAULT_USAGE_RETENTION_DAYS = 400;

/** Records stored per minute by default (the default of `logs.max_records_per_minute`). */
const DEFAULT_RECORDS_PER_MINUTE = 6000;
const MINUTE_MS = 60_000;

/** Options for {@link KvLogSink}. */
export interface KvLogSinkOptions {
  kv: Deno.Kv;
  retentionDays: number;
  /** Days the per-day usage and check counters are kept (`logs.usage_retention_days`); older
   * days are deleted once a day, after a write. */
  usageRetentionDays?: number;
  /** Milliseconds between batched writes. */
  intervalMs?: number;
  /** Records stored per minute at most (default 6000); past it, until the next minute,
   * records are not stored but counted in {@link KvLogSink.dropped}. */
  maxRecordsPerMinute?: number;
  /** The clock the minutes of that budget are read from (default: the system clock). */
  clock?: Clock;
  /** Called when records cannot be written; the error names no request's content. */
  onError?: (error: unknown) => void;
  /** Called at most once a minute, when the minute's first record over the budget arrives. */
  onWarning?: (message: string) => void;
  /** Told how long each commit took, in seconds (the KV commit latency metric). */
  onCommit?: (seconds: number) => void;
}

/** Keeps request records in KV with `expireIn` = retention, written in batches off the
 * request path, and in the same commits the per-day usage counters (see `usage.ts`) and cache and
 * guardrail counters (`checks.ts`); at most
 * a budget of records a minute, so that no stream of requests can fill the disk. */
export class KvLogSink implements LogSink {
  readonly #kv: Deno.Kv;
  readonly #expireIn: number;
  readonly #usageRetentionDays: number;
  /** The UTC day whose sweep of old counters ran (`usage_sweep.ts`), or `null`. */
  #swept: string | null = null;
  readonly #intervalMs: number;
  readonly #maxPerMinute: number;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  readonly #onCommit: ((seconds: number) => void) | undefined;
  readonly #onWarning: (message: string) => void;
  #queue: Queued[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** The minute (ms since the epoch / 60,000) the budget is counted for, and its counts. */
  #minute = NaN;
  #taken = 0;
  #over = 0;
  #dropped = 0;

  constructor(options: KvLogSinkOptions) {
    this.#kv = options.kv;
    this.#expireIn = options.retentionDays * 86_400_000;
    this.#usageRetentionDays = options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#maxPerMinute = options.maxRecordsPerMinute ?? DEFAULT_RECORDS_PER_MINUTE;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => {});
    this.#onCommit = options.onCommit;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  /** Records not stored since the sink was made: over the per-minute budget, or lost with a
   * write that failed. */
  get dropped(): number {
    return this.#dropped;
  }

  add(record: LogRecord, json: string): void {
    if (!this.#withinBudget()) return;
    this.#queue.push({ record, json });
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#drain();
      }, this.#intervalMs);
    }
  }

  /** Writes every queued record now. */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#drain();
    await this.#writing;
  }

  /** Takes one record from this minute's budget; counts it as dropped (and warns on the
   * minute's first) when the budget is spent. */
  #withinBudget(): boolean {
    const minute = Math.floor(this.#clock.now() / MINUTE_MS);
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#taken = 0;
      this.#over = 0;
    }
    if (this.#taken < this.#maxPerMinute) {
      this.#taken++;
      return true;
    }
    this.#dropped++;
    if (this.#over++ === 0) {
      this.#onWarning(
        `more than ${this.#maxPerMinute} request records this minute ` +
          "(logs.max_records_per_minute): the minute's further records go to stdout only",
      );
    }
    return false;
  }

  #drain(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#writing = this.#writing.then(() => this.#write(batch));
  }

  /** Commits the rows of a batch, as many together as KV's limits allow (a commit over them
   * would be refused, and its records committed one by one). */
  async #write(batch: Queued[]): Promise<void> {
    let group: PackedRow[] = [];
    let parts = 0;
    let sums: CounterSums = new Map();
    for (const row of packRows(batch)) {
      const own = counters([row]);
      let added = 0;
      for (const id of own.keys()) if (!sums.has(id)) added++;
      // Each part of a row is one set, and each row one more for its tail entry.
      const more = row.parts.length;
      const mutations = parts + more + group.length + 1 + sums.size + added;
      if (
        group.length > 0 &&
        (group.length === ROWS_PER_COMMIT || parts + more > PARTS_PER_COMMIT ||
          mutations > MAX_MUTATIONS)
      ) {
        await this.#commitRows(group, sums);
        group = [];
        parts = 0;
        sums = new Map();
      }
      group.push(row);
      parts += more;
      mergeSums(sums, own);
    }
    if (group.length > 0) await this.#commitRows(group, sums);
    await this.#sweep();
  }

  /** Once a day, deletes the counters of the days past their retention. */
  async #sweep(): Promise<void> {
    const now = this.#clock.now();
    const today = utcDay(now);
    if (this.#swept === today) return;
    this.#swept = today;
    try {
      await sweepCounters(this.#kv, utcDay(now - (this.#usageRetentionDays - 1) * 86_400_000));
    } catch (e) {
      this.#onError(e);
    }
  }

  /** Commits rows (with their usage) in one operation. If that fails for a reason other than a
   * busy store, commits each record on its own, so that only a record KV refuses is lost. */
  async #commitRows(rows: readonly PackedRow[], sums: CounterSums): Promise<void> {
    try {
      await this.#commit(rows, sums);
      return;
    } catch (e) {
      if (isKvBusy(e)) {
        this.#dropped += recordCount(rows);
        this.#onError(e);
        return;
      }
    }
    const failures: unknown[] = [];
    for (const row of rows) {
      for (let i = 0; i < row.records.length; i++) {
        const lines = [row.lines[i]!];
        const single = { ...row, records: [row.records[i]!], lines, parts: rowParts(lines) };
        try {
          await this.#commit([single], counters([single]));
        } catch (e) {
          failures.push(e);
        }
      }
    }
    if (failures.length === 0) return;
    this.#dropped += failures.length;
    this.#onError(
      new Error(
        `${failures.length} of ${
          recordCount(rows)
        } log records could not be written to KV and were ` +
          `dropped: ${errorText(failures[0])}`,
        { cause: failures[0] },
      ),
    );
  }

  /** Writes rows and their counters' `sums` in one atomic operation, trying again while KV is
   * busy. */
  async #commit(rows: readonly PackedRow[], sums: CounterSums): Promise<void> {
    const result = await retryWhileBusy(() => {
      const op = this.#kv.atomic();
      const committed = this.#clock.now();
      for (const row of rows) {
        const id = crypto.randomUUID();
        const { parts } = row;
        parts.forEach((part, n) => {
          op.set([...LOG_PREFIX, row.bucket, id, parts.length, n], part, {
            expireIn: this.#expireIn,
          });
        });
        op.set([...TAIL_PREFIX, committed, id], row.bucket, { expireIn: TAIL_KEEP_MS });
      }
      for (const { key, n } of sums.values()) op.sum(key, n);
      return timed(op.commit(), this.#onCommit);
    });
    if (!result.ok) throw new Error("log batch commit was rejected");
  }
}

/** The usage and check counters of rows' records, summed per counter. */
function counters(rows: readonly PackedRow[]): CounterSums {
  const sums: CounterSums = new Map();
  for (const row of rows) {
    usageSums(sums, row.records);
    checkSums(sums, row.records);
  }
  return sums;
}

/** The number of records in rows. */
function recordCount(rows: readonly PackedRow[]): number {
  return rows.reduce((n, row) => n + row.records.length, 0);
}

/** An error's name and message (KV's errors name no key or value), at most 200 characters. */
function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
  return truncateText(text, 200);
}

/** A queued record with its JSON text. */
interface Queued {
  record: LogRecord;
  json: string;
}

interface PackedRow {
  bucket: number;
  records: LogRecord[];
  lines: string[];
  bytes: number;
  /** The lines joined, as UTF-8, compressed, in KV parts. */
  parts: Uint8Array[];
}

/** Deflate's level for rows: 3 packs a row of 100 records 6.1 times in 0.15 ms (6: 6.4 times
 * in 0.22 ms; 1: 4.1 times in 0.09 ms). */
const DEFLATE_LEVEL = 3;

/** A row's text as stored: its lines joined by newlines, as UTF-8, compressed, in parts. */
function rowParts(lines: readonly string[]): Uint8Array[] {
  const packed = deflateRawSync(encoder.encode(lines.join("\n")), { level: DEFLATE_LEVEL });
  return cutParts(new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength));
}

/** Groups records by the second they arrived in, into rows that fit a KV value. A record too
 * large for a row (logged content) keeps a note of its content's size instead. */
function packRows(batch: readonly Queued[]): PackedRow[] {
  const open = new Map<number, PackedRow>();
  const rows: PackedRow[] = [];
  for (let { record, json } of batch) {
    if (json.length > ROW_BYTES) {
      const size = JSON.stringify(record.content ?? null).length;
      record = { ...record, content: { truncated: true, bytes: size } };
      json = JSON.stringify(record);
    }
    const bucket = logBucket(Date.parse(record.ts));
    let row = open.get(bucket);
    if (row && (row.records.length >= ROW_RECORDS || row.bytes + json.length > ROW_BYTES)) {
      rows.push(row);
      row = undefined;
    }
    if (!row) {
      row = { bucket, records: [], lines: [], bytes: 0, parts: [] };
      open.set(bucket, row);
    }
    row.records.push(record);
    row.lines.push(json);
    row.bytes += json.length + 1;
  }
  rows.push(...open.values());
  for (const row of rows) row.parts = rowParts(row.lines);
  return rows;
}
