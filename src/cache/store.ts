/**
 * The response cache's entries in Deno KV (docs/caching.md). Under `["cache", scope, key]` a
 * manifest: when the entry expires (clock ms, checked on read, besides KV's `expireIn`, which
 * only real time moves), and the entry itself when it fits one value, else where its chunks
 * are, how many, how long, and their SHA-256. Chunks (under `["cache", scope, key, gen, n]`,
 * `gen` new for each write, so two writers never mix chunks) are small (`kv/parts.ts`: a large
 * value makes every search of KV near it dearer); an entry whose chunks fit one atomic commit
 * is written with its manifest in it, a
 * larger one in several commits with the manifest last, so a reader finds a manifest only
 * once its chunks are all there, and checks them against it.
 */
import { createHash } from "node:crypto";
import { RecentEntries } from "./recent.ts";
import { cutParts, PART_BYTES } from "../kv/parts.ts";

/** Bytes of one chunk, and of an entry kept in its manifest. */
export const CHUNK_BYTES = PART_BYTES;
/** Chunks per atomic commit: KV takes 80 KiB of keys per commit (a chunk's key: ~170 bytes). */
export const CHUNKS_PER_COMMIT = 320;
/** Chunks are kept this much longer than their manifest, which is written after them. */
const CHUNK_GRACE_MS = 60_000;
const PREFIX = "cache";

/** A cache entry's manifest, as stored. */
interface Manifest {
  /** Clock ms from which the entry is stale. */
  expires: number;
  /** The entry, when it fits the manifest. */
  data?: Uint8Array;
  /** Where its chunks are, when it does not. */
  gen?: string;
  chunks?: number;
  bytes?: number;
  /** Hex SHA-256 of the chunks together. */
  digest?: string;
}

/** The bytes of entries a process keeps in memory by default (see recent.ts). */
export const RECENT_BYTES = 16 * 1024 * 1024;

/** Cache entries (bytes) in KV, by scope and key, the ones used last also in memory. */
export class CacheStore {
  readonly #recent: RecentEntries;

  /** `recentBytes`: how many bytes of entries to keep in memory (0: none). */
  constructor(readonly kv: Deno.Kv, recentBytes = RECENT_BYTES) {
    this.#recent = new RecentEntries(recentBytes);
  }

  /** The entry under `scope` and `key`, or `null` when there is none, it expired by `now`
   * (clock ms), or its chunks do not match its manifest (a write overtaken, or cut short). */
  async get(scope: string, key: string, now: number): Promise<Uint8Array | null> {
    const recentKey = `${scope}\n${key}`;
    const recent = this.#recent.get(recentKey, now);
    if (recent !== null) return recent;
    const entry = await this.kv.get<Manifest>([PREFIX, scope, key]);
    const manifest = entry.value;
    if (manifest === null || manifest.expires <= now) return null;
    const data = manifest.data ?? await this.#chunks(scope, key, manifest);
    if (data !== null) this.#recent.set(recentKey, data, manifest.expires);
    return data;
  }

  /** The chunks of an entry as its manifest lists them, or `null` when they do not match it. */
  async #chunks(scope: string, key: string, manifest: Manifest): Promise<Uint8Array | null> {
    const { gen, chunks, bytes, digest } = manifest;
    if (gen === undefined || chunks === undefined || bytes === undefined) return null;
    const all = new Uint8Array(bytes);
    let at = 0;
    let n = 0;
    const list = this.kv.list({ prefix: [PREFIX, scope, key, gen] }, { batchSize: 1000 });
    for await (const { key: chunkKey, value } of list) {
      if (chunkKey[4] !== n++ || !(value instanceof Uint8Array) || at + value.length > bytes) {
        return null;
      }
      all.set(value, at);
      at += value.length;
    }
    if (n !== chunks || at !== bytes || sha256(all) !== digest) return null;
    return all;
  }

  /** Stores `data` under `scope` and `key` for `ttlMs` from `now` (clock ms). */
  async put(
    scope: string,
    key: string,
    data: Uint8Array,
    { now, ttlMs }: { now: number; ttlMs: number },
  ): Promise<void> {
    const head = [PREFIX, scope, key];
    const expires = now + ttlMs;
    this.#recent.set(`${scope}\n${key}`, data, expires);
    if (data.length <= CHUNK_BYTES) {
      // A view is stored with its whole buffer (V8's serialisation): keep only its bytes.
      const own = data.byteLength === data.buffer.byteLength ? data : data.slice();
      await this.#commit(this.kv.atomic().set(head, { expires, data: own }, { expireIn: ttlMs }));
      return;
    }
    const gen = crypto.randomUUID();
    const parts = cutParts(data);
    const chunks = parts.length;
    const manifest: Manifest = { expires, gen, chunks, bytes: data.length, digest: sha256(data) };
    const chunkOptions = { expireIn: ttlMs + CHUNK_GRACE_MS };
    for (let first = 0; first < chunks; first += CHUNKS_PER_COMMIT) {
      const op = this.kv.atomic();
      const end = Math.min(chunks, first + CHUNKS_PER_COMMIT);
      for (let n = first; n < end; n++) op.set([...head, gen, n], parts[n]!, chunkOptions);
      // The last chunks and the manifest go together: one commit for an entry that fits one.
      if (end === chunks) op.set(head, manifest, { expireIn: ttlMs });
      await this.#commit(op);
    }
  }

  async #commit(op: Deno.AtomicOperation): Promise<void> {
    const result = await op.commit();
    if (!result.ok) throw new Error("a cache entry's commit failed");
  }
}

/** Hex SHA-256 of `data`. */
function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
