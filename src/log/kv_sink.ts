import { retryWhileBusy } from "../kv/busy.ts";
import type { LogSink } from "./logger.ts";
import type { LogRecord } from "./record.ts";
import { addUsage } from "./usage.ts";

/** Key prefix of log records in KV: `["logs", <ms since epoch>, <request id>]`. */
export const LOG_PREFIX = ["logs"] as const;

/** Records per commit: with up to 4 usage counters per record this stays within KV's limit of
 * 1000 mutations per atomic operation. */
const MAX_BATCH = 200;

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
  #queue: LogRecord[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: KvLogSinkOptions) {
    this.#kv = options.kv;
    this.#expireIn = options.retentionDays * 86_400_000;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#onError = options.onError ?? (() => {});
  }

  add(record: LogRecord): void {
    this.#queue.push(record);
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

  async #write(batch: LogRecord[]): Promise<void> {
    for (let i = 0; i < batch.length; i += MAX_BATCH) {
      const slice = batch.slice(i, i + MAX_BATCH);
      const commit = () => {
        const op = this.#kv.atomic();
        for (const record of slice) {
          op.set([...LOG_PREFIX, Date.parse(record.ts), record.request_id], record, {
            expireIn: this.#expireIn,
          });
        }
        addUsage(op, slice);
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
