import { createHash } from "node:crypto";
import type { Clock } from "../clock.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import type { KeyRecord } from "./principal.ts";

/** Prefix of every API key. */
export const KEY_PREFIX = "sk-sy-";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = /^sk-sy-[0-9A-Za-z]{32}$/;
/** How many key records one process keeps in memory (each use is still checked against KV). */
const CACHE_SIZE = 10_000;
/** `last_used` is written at most this often per key and process. */
const TOUCH_INTERVAL_MS = 60_000;

/** `length` random base62 characters from the system CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** A new API key: `sk-sy-` + 32 random base62 characters. */
export function generateKey(): string {
  return KEY_PREFIX + randomBase62(32);
}

/** Whether a string has the shape of one of our keys. */
export function isKeyShaped(token: string): boolean {
  return KEY_PATTERN.test(token);
}

/** Hex SHA-256 of a key: the only form in which keys are stored. (Deno's built-in
 * `node:crypto` hashes synchronously in about 1 µs; `crypto.subtle.digest` costs 15-30 µs
 * of a request's budget.) */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** A key record as read from KV, with the versionstamp that proves it current. */
export interface KeyEntry {
  hash: string;
  record: KeyRecord;
  versionstamp: string;
}

/** Fields a caller may set when creating or changing a key. */
export type KeyFields = Partial<
  Pick<
    KeyRecord,
    | "name"
    | "models"
    | "preview"
    | "limits"
    | "disabled"
    | "max_concurrent"
    | "budget"
    | "guardrails"
    | "cache"
  >
>;

/** KV key of a key's record: it lives under the key's hash (found from the presented key
 * alone), with an index from id to hash for the admin operations. */
export function keyRecordKey(hash: string): Deno.KvKey {
  return ["keys", "hash", hash];
}
const byId = (id: string) => ["keys", "id", id];
/** What key ids look like (`key_` + 16 base62 characters); nothing else is looked up. */
const KEY_ID = /^key_[A-Za-z0-9]{16}$/;
/** `last_used` lives apart from the record (a `max` mutation) so that recording a use does
 * not change the record's versionstamp, which every instance checks on each request. */
const usedKey = (id: string) => ["keys", "used", id];

/** The reads of one key's record: the one under way, and the one that follows it for the
 * lookups made meanwhile. */
interface KeyReads {
  current: Promise<KeyEntry | null>;
  next: Promise<KeyEntry | null> | null;
}

/** Options for {@link KeyStore}. */
export interface KeyStoreOptions {
  /** Called when a best-effort `last_used` write fails. */
  onError?: (error: unknown) => void;
}

/**
 * API keys in Deno KV. Besides the admin operations it keeps, per process, the records of
 * keys seen recently ({@link cached}): the request path may start from such a record, but
 * only if it then proves it current, by a versionstamp `check` in the rate limiter's commit
 * or by a fresh read. There is no time-to-live cache: a revoked key fails on every instance
 * on its next request.
 */
export class KeyStore {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  readonly #cache = new Map<string, KeyEntry>();
  readonly #touched = new Map<string, number>();
  /** Reads of key records under way, by hash (see {@link lookup}). */
  readonly #reads = new Map<string, KeyReads>();

  constructor(kv: Deno.Kv, clock: Clock, options: KeyStoreOptions = {}) {
    this.#kv = kv;
    this.#clock = clock;
    this.#onError = options.onError ?? (() => {});
  }

  /** Creates a key; returns the record and the key itself, which is never stored. */
  async create(fields: KeyFields & { name: string }): Promise<{ key: string; record: KeyRecord }> {
    const key = generateKey();
    const hash = hashKey(key);
    const record: KeyRecord = {
      id: "key_" + randomBase62(16),
      name: fields.name,
      hash,
      created: this.#clock.now(),
      last_used: null,
      disabled: fields.disabled ?? false,
      models: fields.models ?? null,
      preview: fields.preview ?? false,
      limits: fields.limits ?? {},
      max_concurrent: fields.max_concurrent ?? null,
      budget: fields.budget ?? null,
      cache: fields.cache ?? null,
    };
    if (fields.guardrails) record.guardrails = fields.guardrails;
    const result = await retryWhileBusy(() =>
      this.#kv.atomic()
        .check({ key: byId(record.id), versionstamp: null })
        .set(keyRecordKey(hash), record)
        .set(byId(record.id), hash)
        .commit()
    );
    if (!result.ok) throw new Error("key id collision; try again");
    return { key, record };
  }

  /** The record for a presented key, read from KV, or `null` when unknown (or revoked). */
  async findByKey(key: string): Promise<KeyRecord | null> {
    if (!isKeyShaped(key)) return null;
    return (await this.lookup(hashKey(key)))?.record ?? null;
  }

  /**
   * Reads the record under a key hash from KV, in a read that starts after this call, and
   * updates this process's copy: a usable (enabled) record is remembered, anything else
   * forgotten. Lookups of one key made while a read of it is under way share the read that
   * follows it: 32 concurrent requests of a key without limits (each proves its key current by a
   * read) cost two reads, not 32 (in process: 27 against 55 microseconds of CPU a request).
   */
  lookup(hash: string): Promise<KeyEntry | null> {
    const reads = this.#reads.get(hash);
    if (reads === undefined) return this.#startRead(hash);
    const next = () => this.#startRead(hash);
    return reads.next ??= reads.current.then(next, next);
  }

  #startRead(hash: string): Promise<KeyEntry | null> {
    const reads: KeyReads = { current: this.#read(hash), next: null };
    this.#reads.set(hash, reads);
    const done = () => {
      if (this.#reads.get(hash) === reads) this.#reads.delete(hash);
    };
    reads.current.then(done, done);
    return reads.current;
  }

  async #read(hash: string): Promise<KeyEntry | null> {
    const entry = await this.#kv.get<KeyRecord>(keyRecordKey(hash));
    if (entry.value === null || entry.versionstamp === null) {
      this.forget(hash);
      return null;
    }
    const found: KeyEntry = { hash, record: entry.value, versionstamp: entry.versionstamp };
    this.remember(found);
    return found;
  }

  /** This process's last known record for a key hash; the caller must still prove it current. */
  cached(hash: string): KeyEntry | undefined {
    return this.#cache.get(hash);
  }

  /** Remembers a record just read or checked (only enabled ones: a cached "disabled" could
   * outlive a re-enable elsewhere). */
  remember(entry: KeyEntry): void {
    if (entry.record.disabled) {
      this.#cache.delete(entry.hash);
      return;
    }
    const known = this.#cache.get(entry.hash);
    if (known && known.versionstamp >= entry.versionstamp) return;
    if (this.#cache.size >= CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(entry.hash, entry);
  }

  /** Forgets a key (revoked or disabled). */
  forget(hash: string): void {
    this.#cache.delete(hash);
  }

  /** The record with this id, or `null`. */
  async get(id: string): Promise<KeyRecord | null> {
    if (!KEY_ID.test(id)) return null;
    const hash = await this.#kv.get<string>(byId(id));
    if (hash.value === null) return null;
    const [entry, used] = await this.#kv.getMany<[KeyRecord, Deno.KvU64]>([
      keyRecordKey(hash.value),
      usedKey(id),
    ]);
    if (entry.value === null) return null;
    return withLastUsed(entry.value, used.value);
  }

  /** Every key record, oldest first. */
  async list(): Promise<KeyRecord[]> {
    const used = new Map<string, Deno.KvU64>();
    for await (const entry of this.#kv.list<Deno.KvU64>({ prefix: ["keys", "used"] })) {
      used.set(String(entry.key[2]), entry.value);
    }
    const out: KeyRecord[] = [];
    for await (const entry of this.#kv.list<KeyRecord>({ prefix: ["keys", "hash"] })) {
      out.push(withLastUsed(entry.value, used.get(entry.value.id) ?? null));
    }
    return out.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  /** Changes a key's fields; returns the new record, or `null` when there is no such key. */
  async update(id: string, fields: KeyFields): Promise<KeyRecord | null> {
    if (!KEY_ID.test(id)) return null;
    for (;;) {
      const hash = await this.#kv.get<string>(byId(id));
      if (hash.value === null) return null;
      const entry = await this.#kv.get<KeyRecord>(keyRecordKey(hash.value));
      if (entry.value === null) return null;
      const record: KeyRecord = { ...entry.value };
      if (fields.name !== undefined) record.name = fields.name;
      if (fields.models !== undefined) record.models = fields.models;
      if (fields.preview !== undefined) record.preview = fields.preview;
      if (fields.limits !== undefined) record.limits = fields.limits;
      if (fields.max_concurrent !== undefined) record.max_concurrent = fields.max_concurrent;
      if (fields.budget !== undefined) record.budget = fields.budget;
      if (fields.guardrails !== undefined) record.guardrails = fields.guardrails;
      if (fields.cache !== undefined) record.cache = fields.cache;
      if (fields.disabled !== undefined) record.disabled = fields.disabled;
      const result = await retryWhileBusy(() =>
        this.#kv.atomic().check(entry).set(keyRecordKey(hash.value), record).commit()
      );
      if (result.ok) {
        this.forget(hash.value);
        const used = await this.#kv.get<Deno.KvU64>(usedKey(id));
        return withLastUsed(record, used.value);
      }
    }
  }

  /** Revokes (deletes) a key; returns whether it existed. */
  async revoke(id: string): Promise<boolean> {
    if (!KEY_ID.test(id)) return false;
    const hash = await this.#kv.get<string>(byId(id));
    if (hash.value === null) return false;
    const result = await retryWhileBusy(() =>
      this.#kv.atomic()
        .check(hash)
        .delete(keyRecordKey(hash.value))
        .delete(byId(id))
        .delete(usedKey(id))
        .commit()
    );
    this.forget(hash.value);
    // A concurrent revoke or re-create won the race: look again.
    if (!result.ok) return await this.revoke(id);
    return true;
  }

  /** Notes that a key was used at `at`: writes `last_used` off the request path, at most
   * once a minute per key in this process, and only while the record is unchanged (so a
   * revoked key leaves nothing behind). */
  noteUse(entry: KeyEntry, at: number): void {
    const last = this.#touched.get(entry.record.id);
    if (last !== undefined && at - last < TOUCH_INTERVAL_MS && at >= last) return;
    if (this.#touched.size >= CACHE_SIZE) this.#touched.clear();
    this.#touched.set(entry.record.id, at);
    retryWhileBusy(() =>
      this.#kv.atomic()
        .check({ key: keyRecordKey(entry.hash), versionstamp: entry.versionstamp })
        .max(usedKey(entry.record.id), BigInt(at))
        .commit()
    ).catch(this.#onError);
  }
}

function withLastUsed(record: KeyRecord, used: Deno.KvU64 | null): KeyRecord {
  return used === null ? record : { ...record, last_used: Number(used.value) };
}
