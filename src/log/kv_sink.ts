import { retryWhileBusy } from "../kv/busy.ts";
import type { LogSink } from "./logger.ts";
import type { LogRecord } from "./record.ts";
import { addUsage } from "./usage.ts";

/**
 * Key prefix of the log in KV. Records are stored in rows of up to {@link ROW_RECORDS}:
 * `["logs", <second the requests arrived, in ms>, <row id>] → {lines: "<JSON>\n<JSON>…"}`,
 * the records' JSON lines as written to stdout; every record in a row arrived in that second.
 * One row per second and flush, holding text already serialised for stdout, rather than one
 * structured KV value per request, keeps the log's share of a request's CPU small.
 */
export const LOG_PREFIX = ["logs"] as const;

/** One KV row of the log. */
export interface LogRow {
  /** JSON records, one per line. */
  lines: string;
}

/** The records of a row. */
export function rowRecords(row: LogRow): LogRecord[] {
  return row.lines.split("\n").map((line) => JSON.parse(line) as LogRecord);
}

/** The width of a row's time bucket. */
export const BUCKET_MS = 1000;
/** At most this many records per row. */
export const ROW_RECORDS = 100;
/** Characters of JSON per row at most, inside KV's 64 KiB per value even for 2-byte text. */
const ROW_BYTES = 30_000;
/** Rows per commit, within KV's limits on an atomic operation's size and mutation count (with
 * up to 4 usage counters per record). */
const ROWS_PER_COMMIT = 8;

/** The time bucket (a row's key part) of a record's arrival time. */
export function logBucket(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_MS;
}

/** Options for {@link KvLogSink}. */
export interface KvLogSinkOptions {
  kv: Deno.Kv;
  retentionDays: number;
  /** Milliseconds between batched writes. */
  intervalMs?: number;
  /** Called when a batch cannot be written. */
  onError?: (error: unknown) => void;
}

/** Keeps request records in KV with `expireIn` = retention, written in batches off the
 * request path, and in the same commits the per-day usage counters (see `usage.ts`). */
export class KvLogSink implements LogSink {
  readonly #kv: Deno.Kv;
  readonly #expireIn: number;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #queue: Queued[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: KvLogSinkOptions) {
    this.#kv = options.kv;
    this.#expireIn = options.retentionDays * 86_400_000;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#onError = options.onError ?? (() => {});
  }

  add(record: LogRecord, json: string): void {
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

  #drain(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#writing = this.#writing.then(() => this.#write(batch));
  }

  async #write(batch: Queued[]): Promise<void> {
    const rows = packRows(batch);
    for (let i = 0; i < rows.length; i += ROWS_PER_COMMIT) {
      const slice = rows.slice(i, i + ROWS_PER_COMMIT);
      const commit = () => {
        const op = this.#kv.atomic();
        for (const row of slice) {
          const value: LogRow = { lines: row.lines.join("\n") };
          op.set([...LOG_PREFIX, row.bucket, crypto.randomUUID()], value, {
            expireIn: this.#expireIn,
          });
          addUsage(op, row.records);
        }
        return op.commit();
      };
      try {
        const result = await retryWhileBusy(commit);
        if (!result.ok) this.#onError(new Error("log batch commit was rejected"));
      } catch (e) {
        this.#onError(e);
      }
    }
  }
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
      row = { bucket, records: [], lines: [], bytes: 0 };
      open.set(bucket, row);
    }
    row.records.push(record);
    row.lines.push(json);
    row.bytes += json.length + 1;
  }
  rows.push(...open.values());
  return rows;
}
