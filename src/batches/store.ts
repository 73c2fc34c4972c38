/**
 * Batches on KV: a batch's record, its lines' results (each written once, with an atomic
 * check), and its counters (KV sums, which never conflict), listed per owner newest first.
 * Everything a batch needs to go on is here, so any instance (or a restarted one) can.
 */
import { retryWhileBusy } from "../kv/busy.ts";
import { cutParts } from "../kv/parts.ts";
import { concatBytes } from "../http/bytes.ts";
import { timeOrderedId } from "./ids.ts";

/** OpenAI's batch statuses. */
export type BatchStatus =
  | "validating"
  | "failed"
  | "in_progress"
  | "finalizing"
  | "completed"
  | "expired"
  | "cancelling"
  | "cancelled";

/** How a batch that stopped taking lines ends. */
export type BatchOutcome = "completed" | "cancelled" | "expired";

/** One error of a batch (OpenAI's `BatchError`). */
export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** A batch's record, as stored. Times are Unix seconds. */
export interface BatchRecord {
  id: string;
  /** The id of the key that created it, and its hash (to run its lines as that key). */
  owner: string;
  owner_hash: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  errors: BatchError[] | null;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  /** Lines in the input file (0 until validated). */
  total: number;
  /** Lines queued so far (the start goes on from here if it is delivered again). */
  queued: number;
  /** How it ends once it stops taking lines (set with `finalizing` or `cancelling`). */
  outcome: BatchOutcome | null;
}

/** A line's result: its output file line, in the output file (`ok`) or the error file. */
export interface LineResult {
  ok: boolean;
  /** The line's JSON, when short (else in `parts` parts, `kv/parts.ts`). */
  text?: string;
  parts?: number;
}

/** How many lines are done, and of them how many failed. */
export interface BatchCounts {
  done: number;
  failed: number;
}

/** Characters of a result kept in its record (at most 2 bytes each as KV stores a string): a
 * longer one is kept in parts of UTF-8 (a large value makes every search of KV near it dearer). */
const INLINE_CHARS = 400;
/** Parts written per commit: 700 of 800 bytes with their ~60-byte keys are within KV's 800 KiB
 * and 80 KiB of keys a commit, beside the record. */
const PARTS_PER_COMMIT = 700;

export const batchKey = (id: string): Deno.KvKey => ["batches", id];
/** A batch's input lines' places (offset, length), a chunk of them per value. */
export const spansKey = (id: string, chunk: number): Deno.KvKey => ["batch_spans", id, chunk];
/** The index of running batches (from in_progress until they end). */
export const activeKey = (id: string): Deno.KvKey => ["batches_active", id];
const ownerKey = (owner: string, id: string): Deno.KvKey => ["batches_by_owner", owner, id];
const resultKey = (id: string, index: number): Deno.KvKey => ["batch_results", id, index];
const partKey = (id: string, index: number, n: number): Deno.KvKey => [
  "batch_result_parts",
  id,
  index,
  n,
];
const countKey = (id: string, name: "done" | "failed"): Deno.KvKey => ["batch_counts", id, name];

/** The batches on a KV store, kept `retentionMs` after their creation. */
export class BatchStore {
  constructor(readonly kv: Deno.Kv, readonly retentionMs: number) {}

  /** A new batch id. */
  newId(nowMs: number): string {
    return timeOrderedId("batch_", nowMs);
  }

  /** Stores a new batch and `then` (its first queue message) in one commit. */
  async create(batch: BatchRecord, message: unknown): Promise<void> {
    const expireIn = this.retentionMs;
    const result = await retryWhileBusy(() =>
      this.kv.atomic()
        .check({ key: batchKey(batch.id), versionstamp: null })
        .set(batchKey(batch.id), batch, { expireIn })
        .set(ownerKey(batch.owner, batch.id), true, { expireIn })
        .enqueue(message)
        .commit()
    );
    if (!result.ok) throw new Error(`batch ${batch.id} exists`);
  }

  /** The batch with its versionstamp, or `null`. */
  async entry(id: string): Promise<Deno.KvEntryMaybe<BatchRecord>> {
    return await this.kv.get<BatchRecord>(batchKey(id));
  }

  /** Batch `id` if `owner` owns it, else `null`. */
  async get(id: string, owner: string): Promise<BatchRecord | null> {
    const batch = (await this.entry(id)).value;
    return batch !== null && batch.owner === owner ? batch : null;
  }

  /**
   * Changes a batch with `change` (which returns the new record, or `null` to leave it) and
   * commits it with `also` (queue messages...), retried on conflicts; resolves with the new
   * record, or `null` when there is no batch or `change` left it.
   */
  async update(
    id: string,
    change: (batch: BatchRecord) => BatchRecord | null,
    also: (op: Deno.AtomicOperation, batch: BatchRecord) => void = () => {},
  ): Promise<BatchRecord | null> {
    for (;;) {
      const entry = await this.entry(id);
      if (entry.value === null) return null;
      const next = change(entry.value);
      if (next === null) return null;
      const result = await retryWhileBusy(() => {
        const op = this.kv.atomic().check(entry).set(batchKey(id), next, {
          expireIn: this.retentionMs,
        });
        also(op, next);
        return op.commit();
      });
      if (result.ok) return next;
    }
  }

  /** The done and failed counts. */
  async counts(id: string): Promise<BatchCounts> {
    const [done, failed] = await this.kv.getMany<[Deno.KvU64, Deno.KvU64]>([
      countKey(id, "done"),
      countKey(id, "failed"),
    ]);
    return { done: Number(done.value?.value ?? 0n), failed: Number(failed.value?.value ?? 0n) };
  }

  /** Whether line `index` has its result. */
  async hasResult(id: string, index: number): Promise<boolean> {
    return (await this.kv.get(resultKey(id, index))).versionstamp !== null;
  }

  /**
   * Writes line `index`'s result once: only while the batch is as `batch` (still taking
   * lines) and the line has none. `"written"`, `"exists"` (written before: a redelivery), or
   * `"stale"` (the batch changed: read it again). A long result's parts are written with its
   * record, with the check; those over what one commit holds first (parts written again by a
   * redelivery are the same keys).
   */
  async writeResult(
    batch: Deno.KvEntry<BatchRecord>,
    index: number,
    ok: boolean,
    text: string,
  ): Promise<"written" | "exists" | "stale"> {
    const id = batch.value.id;
    const expireIn = this.retentionMs;
    const parts = text.length <= INLINE_CHARS ? [] : cutParts(new TextEncoder().encode(text));
    const withRecord = Math.max(0, parts.length - PARTS_PER_COMMIT);
    for (let first = 0; first < withRecord; first += PARTS_PER_COMMIT) {
      await retryWhileBusy(() => {
        const op = this.kv.atomic();
        for (let n = first; n < Math.min(withRecord, first + PARTS_PER_COMMIT); n++) {
          op.set(partKey(id, index, n), parts[n]!, { expireIn });
        }
        return op.commit();
      });
    }
    const result: LineResult = parts.length === 0 ? { ok, text } : { ok, parts: parts.length };
    const committed = await retryWhileBusy(() => {
      const op = this.kv.atomic()
        .check({ key: resultKey(id, index), versionstamp: null })
        .check(batch)
        .set(resultKey(id, index), result, { expireIn })
        .sum(countKey(id, "done"), 1n);
      for (let n = withRecord; n < parts.length; n++) {
        op.set(partKey(id, index, n), parts[n]!, { expireIn });
      }
      if (!ok) op.sum(countKey(id, "failed"), 1n);
      return op.commit();
    });
    if (committed.ok) return "written";
    return await this.hasResult(id, index) ? "exists" : "stale";
  }

  /** The results written so far, in line order: `[ok, text]`. */
  async *results(id: string): AsyncGenerator<[boolean, string]> {
    for await (const entry of this.kv.list<LineResult>({ prefix: ["batch_results", id] })) {
      const result = entry.value;
      if (result.text !== undefined) {
        yield [result.ok, result.text];
        continue;
      }
      // Parts of UTF-8, or (written before parts were small) of text.
      let text = "";
      const bytes: Uint8Array[] = [];
      const list = this.kv.list<string | Uint8Array>({
        prefix: ["batch_result_parts", id, entry.key[2]!],
      }, { batchSize: 1000 });
      for await (const { value } of list) {
        if (typeof value === "string") text += value;
        else bytes.push(value);
      }
      yield [result.ok, text + new TextDecoder().decode(concatBytes(bytes))];
    }
  }

  /** Lines queued and not yet done, summed over the running batches. */
  async queueDepth(): Promise<number> {
    let depth = 0;
    for await (const entry of this.kv.list({ prefix: ["batches_active"] })) {
      const id = String(entry.key[1]);
      const [batch, counts] = await Promise.all([this.entry(id), this.counts(id)]);
      if (batch.value !== null) depth += Math.max(0, batch.value.queued - counts.done);
    }
    return depth;
  }

  /** The owner's batches (every owner's with `owner` null), newest first, after batch `after`;
   * `limit` at most. */
  async list(
    owner: string | null,
    limit: number,
    after?: string,
  ): Promise<{ batches: BatchRecord[]; hasMore: boolean }> {
    const prefix = owner === null ? ["batches"] : ["batches_by_owner", owner];
    const selector: Deno.KvListSelector = after === undefined
      ? { prefix }
      : { prefix, end: [...prefix, after] };
    const batches: BatchRecord[] = [];
    for await (const entry of this.kv.list(selector, { reverse: true })) {
      const id = String(entry.key[entry.key.length - 1]);
      const batch = owner === null ? entry.value as BatchRecord : await this.get(id, owner);
      if (batch === null) continue;
      if (batches.length === limit) return { batches, hasMore: true };
      batches.push(batch);
    }
    return { batches, hasMore: false };
  }
}
