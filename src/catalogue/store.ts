import type { ModelConfig } from "../config/types.ts";
import type { Clock } from "../clock.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import type { ModelRecord } from "./model.ts";

const MODEL_PREFIX = ["catalogue", "model"] as const;
const VERSION_KEY = ["catalogue", "version"] as const;
const BATCH = 500;
/** Model ids are at most this long (config/models.ts checks them); longer ones are not looked
 * up. */
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
  /** Models found by discovery (discovery.ts): offered beside the KV records, never stored. */
  #discovered = new Map<string, ModelRecord>();
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

  /**
   * Brings the config's models into KV without clobbering anyone (DESIGN §4): adds what the
   * config has and KV lacks; updates a record the config owns (`source: "config"`) when the
   * config's entry differs from the one it was seeded from (`config_hash`); never touches a
   * record the admin API wrote, and never deletes (see {@link prune}). Each write checks that
   * the record did not change since it was read, so a concurrent admin change wins.
   * Returns the ids written.
   */
  async seed(models: readonly ModelConfig[]): Promise<string[]> {
    const nowSeconds = Math.floor(this.#clock.now() / 1000);
    const hashes = await Promise.all(models.map(configHash));
    const written = await this.#rewrite((existing) => {
      const writes: Write[] = [];
      models.forEach((model, i) => {
        const prior = existing.get(model.id);
        if (prior && !(prior.value.source === "config" && prior.value.config_hash !== hashes[i])) {
          return;
        }
        const record: ModelRecord = {
          ...model,
          created: model.created ?? prior?.value.created ?? nowSeconds,
          source: "config",
          config_hash: hashes[i]!,
        };
        writes.push({ id: model.id, versionstamp: prior?.versionstamp ?? null, record });
      });
      return writes;
    });
    await this.refresh();
    return written;
  }

  /**
   * Deletes the records the config owns whose ids `models` no longer lists (`deno task
   * catalogue prune`): seeding never deletes, so a model dropped from the config stays until
   * pruned. Admin-written records stay. Returns the ids deleted.
   */
  async prune(models: readonly ModelConfig[]): Promise<string[]> {
    const wanted = new Set(models.map((m) => m.id));
    const deleted = await this.#rewrite((existing) =>
      [...existing.values()]
        .filter(({ value }) => value.source === "config" && !wanted.has(value.id))
        .map(({ value, versionstamp }) => ({ id: value.id, versionstamp, record: null }))
    );
    await this.refresh();
    return deleted;
  }

  /** Applies the writes `plan` makes of the current records, each checked against the
   * versionstamp it was planned on; when another writer got there first, plans again. */
  async #rewrite(
    plan: (existing: Map<string, Deno.KvEntry<ModelRecord>>) => Write[],
  ): Promise<string[]> {
    for (let attempt = 1;; attempt++) {
      const existing = new Map<string, Deno.KvEntry<ModelRecord>>();
      for (const entry of await this.#listModels()) existing.set(entry.value.id, entry);
      const writes = plan(existing);
      let conflict = false;
      for (let i = 0; i < writes.length && !conflict; i += BATCH) {
        const result = await retryWhileBusy(() => {
          const op = this.#kv.atomic();
          for (const { id, versionstamp, record } of writes.slice(i, i + BATCH)) {
            const key = [...MODEL_PREFIX, id];
            op.check({ key, versionstamp });
            if (record === null) op.delete(key);
            else op.set(key, record);
          }
          return op.sum([...VERSION_KEY], 1n).commit();
        });
        conflict = !result.ok;
      }
      if (!conflict) return writes.map((w) => w.id);
      if (attempt >= 10) throw new Error("the catalogue kept changing while it was being seeded");
    }
  }

  /** The record for a model id, from the in-process copy: the KV record, else the discovered
   * model (a KV record, even a disabled one, hides a discovered model of the same id). */
  get(id: string): ModelRecord | undefined {
    return this.#models.get(id) ?? this.#discovered.get(id);
  }

  /** All records (KV records, and the discovered models they do not hide), in id order. */
  all(): ModelRecord[] {
    const records = [...this.#models.values()];
    if (this.#discovered.size === 0) return records;
    for (const record of this.#discovered.values()) {
      if (!this.#models.has(record.id)) records.push(record);
    }
    return records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Replaces this process's discovered models (never written to KV; see discovery.ts). */
  setDiscovered(records: readonly ModelRecord[]): void {
    this.#discovered = new Map(records.map((record) => [record.id, record]));
  }

  /**
   * Creates or replaces the record of `id` (a valid model id) with the one `make` builds from
   * the record it replaces (the KV record, else a discovered model; `undefined` when there is
   * none; `make` may throw to refuse). The commit checks that the KV record is still the one
   * `make` was given, so a concurrent write or delete, from any process, makes it read and
   * build again: of concurrent writers of a new id exactly one creates it. Every instance sees
   * the record on its next refresh.
   */
  async write(
    id: string,
    make: (prior: ModelRecord | undefined) => ModelRecord,
  ): Promise<{ record: ModelRecord; created: boolean }> {
    const key = [...MODEL_PREFIX, id];
    for (;;) {
      const entry = await retryWhileBusy(() => this.#kv.get<ModelRecord>(key));
      const prior = entry.value ?? this.#discovered.get(id);
      const record = make(prior);
      const result = await retryWhileBusy(() =>
        this.#kv.atomic().check(entry).set(key, record).sum([...VERSION_KEY], 1n).commit()
      );
      if (result.ok) {
        await this.refresh();
        return { record, created: prior === undefined };
      }
    }
  }

  /** Deletes a model record from KV; returns whether it existed. Of concurrent deletes of
   * one record, from any process, exactly one returns `true`. */
  async delete(id: string): Promise<boolean> {
    if (id.length > MAX_ID_CHARS) return false;
    const key = [...MODEL_PREFIX, id];
    for (;;) {
      const entry = await retryWhileBusy(() => this.#kv.get(key));
      if (entry.versionstamp === null) return false;
      const result = await retryWhileBusy(() =>
        this.#kv.atomic().check(entry).delete(key).sum([...VERSION_KEY], 1n).commit()
      );
      if (result.ok) {
        await this.refresh();
        return true;
      }
    }
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
    const entry = await retryWhileBusy(() => this.#kv.get<Deno.KvU64>([...VERSION_KEY]));
    return entry.value?.value ?? null;
  }

  async #readAll(): Promise<Map<string, ModelRecord>> {
    const models = new Map<string, ModelRecord>();
    for (const entry of await this.#listModels()) models.set(entry.value.id, entry.value);
    return models;
  }

  /** Every stored record (read again whole when the store was busy). */
  #listModels(): Promise<Deno.KvEntry<ModelRecord>[]> {
    return retryWhileBusy(() =>
      Array.fromAsync(this.#kv.list<ModelRecord>({ prefix: [...MODEL_PREFIX] }))
    );
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

/** One planned change: `record` (`null`: delete) if the entry is still at `versionstamp`. */
interface Write {
  id: string;
  versionstamp: string | null;
  record: ModelRecord | null;
}

/** A short fingerprint of a model's config entry: what a config-owned record was seeded from. */
export async function configHash(model: ModelConfig): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(model));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
