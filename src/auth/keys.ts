import type { Clock } from "../clock.ts";
import type { KeyRecord } from "./principal.ts";

/** Prefix of every API key. */
export const KEY_PREFIX = "sk-sy-";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = /^sk-sy-[0-9A-Za-z]{32}$/;

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

/** Hex SHA-256 of a key: the only form in which keys are stored. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Fields a caller may set when creating or changing a key. */
export type KeyFields = Partial<
  Pick<KeyRecord, "name" | "models" | "preview" | "limits" | "disabled">
>;

/** KV keys: the record lives under its hash (one read per authenticated request), with an
 * index from id to hash for the admin operations. */
const byHash = (hash: string) => ["keys", "hash", hash] as const;
const byId = (id: string) => ["keys", "id", id] as const;

/** API keys in Deno KV. */
export class KeyStore {
  constructor(private readonly kv: Deno.Kv, private readonly clock: Clock) {}

  /** Creates a key; returns the record and the key itself, which is never stored. */
  async create(fields: KeyFields & { name: string }): Promise<{ key: string; record: KeyRecord }> {
    const key = generateKey();
    const hash = await hashKey(key);
    const record: KeyRecord = {
      id: "key_" + randomBase62(16),
      name: fields.name,
      hash,
      created: this.clock.now(),
      last_used: null,
      disabled: fields.disabled ?? false,
      models: fields.models ?? null,
      preview: fields.preview ?? false,
      limits: fields.limits ?? {},
    };
    const result = await this.kv.atomic()
      .check({ key: byId(record.id), versionstamp: null })
      .set(byHash(hash), record)
      .set(byId(record.id), hash)
      .commit();
    if (!result.ok) throw new Error("key id collision; try again");
    return { key, record };
  }

  /** The record for a presented key, or `null` when unknown (or revoked). */
  async findByKey(key: string): Promise<KeyRecord | null> {
    if (!isKeyShaped(key)) return null;
    const entry = await this.kv.get<KeyRecord>(byHash(await hashKey(key)));
    return entry.value;
  }

  /** The record with this id, or `null`. */
  async get(id: string): Promise<KeyRecord | null> {
    const hash = await this.kv.get<string>(byId(id));
    if (hash.value === null) return null;
    return (await this.kv.get<KeyRecord>(byHash(hash.value))).value;
  }

  /** Every key record, oldest first. */
  async list(): Promise<KeyRecord[]> {
    const out: KeyRecord[] = [];
    for await (const entry of this.kv.list<KeyRecord>({ prefix: ["keys", "hash"] })) {
      out.push(entry.value);
    }
    return out.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  /** Changes a key's fields; returns the new record, or `null` when there is no such key. */
  async update(id: string, fields: KeyFields): Promise<KeyRecord | null> {
    for (;;) {
      const hash = await this.kv.get<string>(byId(id));
      if (hash.value === null) return null;
      const entry = await this.kv.get<KeyRecord>(byHash(hash.value));
      if (entry.value === null) return null;
      const record: KeyRecord = { ...entry.value };
      if (fields.name !== undefined) record.name = fields.name;
      if (fields.models !== undefined) record.models = fields.models;
      if (fields.preview !== undefined) record.preview = fields.preview;
      if (fields.limits !== undefined) record.limits = fields.limits;
      if (fields.disabled !== undefined) record.disabled = fields.disabled;
      const result = await this.kv.atomic().check(entry).set(byHash(hash.value), record).commit();
      if (result.ok) return record;
    }
  }

  /** Revokes (deletes) a key; returns whether it existed. */
  async revoke(id: string): Promise<boolean> {
    const hash = await this.kv.get<string>(byId(id));
    if (hash.value === null) return false;
    await this.kv.atomic().delete(byHash(hash.value)).delete(byId(id)).commit();
    return true;
  }

  /** Records the time a key was last used (best effort, off the request path). */
  async touch(record: KeyRecord, at: number): Promise<void> {
    const entry = await this.kv.get<KeyRecord>(byHash(record.hash));
    if (entry.value === null) return;
    await this.kv.atomic().check(entry).set(byHash(record.hash), { ...entry.value, last_used: at })
      .commit();
  }
}
