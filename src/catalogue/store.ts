import type { ModelConfig } from "../config.ts";
import type { Clock } from "../clock.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import type { ModelRecord } from "./model.ts";

const MODEL_PREFIX = ["catalogue", "model"] as const;
const VERSION_KEY = ["catalogue", "version"] as const;
const BATCH = 500;
/** Model ids are at most this long (config.ts checks them); longer ones are not looked up. */
const MAX_ID_CHARS = 128;

/** Options for {@link Catalogue.open}. */
export interface CatalogueOptions {
  kv: Deno.Kv;
  clock: Clock;
  /** How often to poll KV for changes made by other processes (watch does not cross them). */
  pollMs?: number;
}

/**
 * The model catalogue: records live in KV, and every instance serves an in-process copy
 * that it refreshes when the catalogue's version key changes (kv.watch, plus a poll for
 * changes made by other processes on a local KV file, which watch does not report).
 */
export class Catalogue {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  #models = new Map<string, ModelRecord>();
  #version: bigint | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Stops the kv.watch (its stream is locked by pipeTo, so cancel() would not). */
  readonly #unwatch = new AbortController();
  #closed = false;
  #refreshing: Promise<void> | null = null;

  private constructor(options: CatalogueOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
  }

  /** Loads the catalogue from KV and starts following changes. */
  static async open(options: CatalogueOptions): Promise<Catalogue> {
    const catalogue = new Catalogue(options);
    await catalogue.refresh();
    catalogue.#follow(options.pollMs ?? 500);
    return catalogue;
  }

  /** Writes the config's models into KV (keeping each one's first registration time) and
   * removes config-seeded records that the config no longer has. Admin-added ones stay. */
  async seed(models: readonly ModelConfig[]): Promise<void> {
    const existing = await this.#readAll();
    const nowSeconds = Math.floor(this.#clock.now() / 1000);
    const wanted = new Set(models.map((m) => m.id));
    const writes: ((op: Deno.AtomicOperation) => void)[] = [];
    for (const model of models) {
      const prior = existing.get(model.id);
      const record: ModelRecord = {
        ...model,
        created: model.created ?? prior?.created ?? nowSeconds,
        source: "config",
      };
      if (prior && sameRecord(prior, record)) continue;
      writes.push((op) => op.set([...MODEL_PREFIX, model.id], record));
    }
    for (const [id, record] of existing) {
      if (record.source === "config" && !wanted.has(id)) {
        writes.push((op) => op.delete([...MODEL_PREFIX, id]));
      }
    }
    for (let i = 0; i < writes.length; i += BATCH) {
      await retryWhileBusy(() => {
        const op = this.#kv.atomic();
        for (const write of writes.slice(i, i + BATCH)) write(op);
        return op.sum([...VERSION_KEY], 1n).commit();
      });
    }
    await this.refresh();
  }

  /** The record for a model id, from the in-process copy. */
  get(id: string): ModelRecord | undefined {
    return this.#models.get(id);
  }

  /** All records, in id order. */
  all(): ModelRecord[] {
    return [...this.#models.values()];
  }

  /** Creates or replaces a model record in KV; every instance sees it on its next refresh. */
  async put(record: ModelRecord): Promise<void> {
    await retryWhileBusy(() =>
      this.#kv.atomic()
        .set([...MODEL_PREFIX, record.id], record)
        .sum([...VERSION_KEY], 1n)
        .commit()
    );
    await this.refresh();
  }

  /** Deletes a model record from KV; returns whether it existed. */
  async delete(id: string): Promise<boolean> {
    if (id.length > MAX_ID_CHARS) return false;
    const entry = await this.#kv.get([...MODEL_PREFIX, id]);
    if (entry.versionstamp === null) return false;
    await retryWhileBusy(() =>
      this.#kv.atomic()
        .delete([...MODEL_PREFIX, id])
        .sum([...VERSION_KEY], 1n)
        .commit()
    );
    await this.refresh();
    return true;
  }

  /** Reloads the in-process copy from KV. */
  refresh(): Promise<void> {
    if (this.#refreshing) return this.#refreshing;
    this.#refreshing = (async () => {
      try {
        const version = await this.#readVersion();
        this.#models = await this.#readAll();
        this.#version = version;
      } finally {
        this.#refreshing = null;
      }
    })();
    return this.#refreshing;
  }

  /** Stops following KV. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#unwatch.abort();
  }

  async #readVersion(): Promise<bigint | null> {
    const entry = await this.#kv.get<Deno.KvU64>([...VERSION_KEY]);
    return entry.value?.value ?? null;
  }

  async #readAll(): Promise<Map<string, ModelRecord>> {
    const models = new Map<string, ModelRecord>();
    for await (const entry of this.#kv.list<ModelRecord>({ prefix: [...MODEL_PREFIX] })) {
      models.set(entry.value.id, entry.value);
    }
    return models;
  }

  #follow(pollMs: number): void {
    const check = async () => {
      if (this.#closed) return;
      try {
        const version = await this.#readVersion();
        if (version !== this.#version) await this.refresh();
      } catch {
        // KV briefly unavailable: the next tick tries again.
      }
    };
    this.#timer = setInterval(check, pollMs);
    Deno.unrefTimer(this.#timer);
    this.#kv.watch([[...VERSION_KEY]])
      .pipeTo(new WritableStream({ write: check }), { signal: this.#unwatch.signal })
      .catch(() => {});
  }
}

function sameRecord(a: ModelRecord, b: ModelRecord): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
