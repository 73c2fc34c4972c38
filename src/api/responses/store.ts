/**
 * Stored responses in Deno KV (README "Responses API"), so that `previous_response_id`, `GET`
 * and `DELETE` work on every instance: under `["responses", id]` a head (its owner and how
 * many chunks follow), under `["responses", id, n]` the record's JSON in chunks below KV's
 * value limit, all written in one atomic operation and all expiring after
 * {@link RETENTION_MS}. A record over {@link MAX_STORED_BYTES} is not stored, nor one whose id
 * is over {@link MAX_ID_BYTES} (such an id is never found).
 */
import type { Principal } from "../../auth/principal.ts";
import type { WireObject } from "./output.ts";

/** How long a stored response is kept: 30 days, as OpenAI keeps them. */
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** The largest record stored (its JSON's bytes): KV's atomic writes take 800 KiB at most. */
export const MAX_STORED_BYTES = 640 * 1024;
/** The longest id kept (its UTF-8 bytes): KV's keys take 2 KiB at most, and a NUL in a string
 * key takes two bytes. Ours have 37 characters; an upstream's, in the passthrough, about 50. */
export const MAX_ID_BYTES = 512;
/** Bytes of one chunk (KV's values take 64 KiB at most). */
const CHUNK_BYTES = 60 * 1024;
const PREFIX = "responses";

/** What is kept of a response. */
export interface StoredResponse {
  /** The Response object as it was answered. */
  response: WireObject;
  /** This request's input items, as sent. */
  input: WireObject[];
  /** The whole conversation to continue from, as input items: the previous response's
   * history, this input and this output (reasoning with its `encrypted_content`). */
  history: WireObject[];
}

interface Head {
  owner: string;
  chunks: number;
}

/** Who may see a response: the key that made it; anonymous responses only anonymous callers
 * (the gateway cannot tell one anonymous caller from another). */
export function ownerOf(principal: Principal): string {
  return principal.kind === "key" ? `key:${principal.key.id}` : "anonymous";
}

/** Responses kept in KV. */
export class ResponseStore {
  constructor(readonly kv: Deno.Kv) {}

  /** Stores a record; `false` when it is over {@link MAX_STORED_BYTES} or its id over
   * {@link MAX_ID_BYTES}. */
  async put(id: string, owner: string, record: StoredResponse): Promise<boolean> {
    if (!storable(id)) return false;
    const bytes = new TextEncoder().encode(JSON.stringify(record));
    if (bytes.length > MAX_STORED_BYTES) return false;
    const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
    const options = { expireIn: RETENTION_MS };
    const op = this.kv.atomic().set([PREFIX, id], { owner, chunks } satisfies Head, options);
    for (let n = 0; n < chunks; n++) {
      op.set([PREFIX, id, n], bytes.slice(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), options);
    }
    const result = await op.commit();
    if (!result.ok) throw new Error(`could not store response ${id}`);
    return true;
  }

  /** The record, when it exists and belongs to `owner`. */
  async get(id: string, owner: string): Promise<StoredResponse | null> {
    const head = await this.#head(id, owner);
    if (head === null) return null;
    const keys = Array.from({ length: head.chunks }, (_, n) => [PREFIX, id, n]);
    const parts: Uint8Array[] = [];
    for (let at = 0; at < keys.length; at += 10) {
      const entries = await this.kv.getMany<Uint8Array[]>(keys.slice(at, at + 10));
      for (const entry of entries) {
        if (entry.value === null) return null;
        parts.push(entry.value);
      }
    }
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    return JSON.parse(new TextDecoder().decode(all)) as StoredResponse;
  }

  /** Deletes the record; `false` when it does not exist or belongs to someone else. */
  async delete(id: string, owner: string): Promise<boolean> {
    const head = await this.#head(id, owner);
    if (head === null) return false;
    const op = this.kv.atomic().delete([PREFIX, id]);
    for (let n = 0; n < head.chunks; n++) op.delete([PREFIX, id, n]);
    await op.commit();
    return true;
  }

  async #head(id: string, owner: string): Promise<Head | null> {
    // KV throws for a key over its bound: such an id was never stored.
    if (!storable(id)) return null;
    const entry = await this.kv.get<Head>([PREFIX, id]);
    return entry.value !== null && entry.value.owner === owner ? entry.value : null;
  }
}

/** Whether an id is short enough to be a key (see {@link MAX_ID_BYTES}). */
function storable(id: string): boolean {
  return new TextEncoder().encode(id).length <= MAX_ID_BYTES;
}
