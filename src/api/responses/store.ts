/**
 * Stored responses in Deno KV (README "Responses API"), so that `previous_response_id`, `GET`
 * and `DELETE` work on every instance: under `["responses", id]` a head (its owner, and where
 * and in how many parts its record is), under `["response_parts", gen, n]` the record's JSON in
 * small parts (`kv/parts.ts`: a large value makes every search of KV near it dearer; `gen` new
 * for each record keeps the parts' keys short whatever the id), all written in one atomic
 * operation and all expiring after {@link RETENTION_MS}. A record over {@link MAX_STORED_BYTES}
 * is not stored, nor one whose id is over {@link MAX_ID_BYTES} (such an id is never found).
 * Records stored before parts (`["responses", id, n]`, 60 KiB each) are read until they expire.
 */
import type { Principal } from "../../auth/principal.ts";
import { cutParts } from "../../kv/parts.ts";
import { concatBytes } from "../../http/bytes.ts";
import type { WireObject } from "./output.ts";

/** How long a stored response is kept: 30 days, as OpenAI keeps them. */
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** The largest record stored (its JSON's bytes): KV's atomic writes take 800 KiB at most (and
 * 1,000 entries: 820 parts and the head). */
export const MAX_STORED_BYTES = 640 * 1024;
/** The longest id kept (its UTF-8 bytes): KV's keys take 2 KiB at most, and a NUL in a string
 * key takes two bytes. Ours have 37 characters; an upstream's, in the passthrough, about 50. */
export const MAX_ID_BYTES = 512;
const PREFIX = "responses";
const PARTS_PREFIX = "response_parts";

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
  /** Where the parts are (absent in a head stored before parts: its chunks are under the id). */
  gen?: string;
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
    const parts = cutParts(bytes);
    const gen = crypto.randomUUID();
    const options = { expireIn: RETENTION_MS };
    const head: Head = { owner, chunks: parts.length, gen };
    const op = this.kv.atomic().set([PREFIX, id], head, options);
    parts.forEach((part, n) => op.set([PARTS_PREFIX, gen, n], part, options));
    const result = await op.commit();
    if (!result.ok) throw new Error(`could not store response ${id}`);
    return true;
  }

  /** The record, when it exists and belongs to `owner`. */
  async get(id: string, owner: string): Promise<StoredResponse | null> {
    const head = await this.#head(id, owner);
    if (head === null) return null;
    const parts = head.gen === undefined
      ? await this.#legacyChunks(id, head.chunks)
      : await this.#parts(head.gen, head.chunks);
    if (parts === null) return null;
    return JSON.parse(new TextDecoder().decode(concatBytes(parts))) as StoredResponse;
  }

  /** A record's parts, or `null` when one is missing. */
  async #parts(gen: string, count: number): Promise<Uint8Array[] | null> {
    const parts: Uint8Array[] = [];
    const list = this.kv.list<Uint8Array>({ prefix: [PARTS_PREFIX, gen] }, { batchSize: 1000 });
    for await (const { key, value } of list) {
      if (key[2] !== parts.length) return null;
      parts.push(value);
    }
    return parts.length === count ? parts : null;
  }

  /** The chunks of a record stored before parts, or `null` when one is missing. */
  async #legacyChunks(id: string, count: number): Promise<Uint8Array[] | null> {
    const keys = Array.from({ length: count }, (_, n) => [PREFIX, id, n]);
    const parts: Uint8Array[] = [];
    for (let at = 0; at < keys.length; at += 10) {
      for (const entry of await this.kv.getMany<Uint8Array[]>(keys.slice(at, at + 10))) {
        if (entry.value === null) return null;
        parts.push(entry.value);
      }
    }
    return parts;
  }

  /** Deletes the record; `false` when it does not exist or belongs to someone else. */
  async delete(id: string, owner: string): Promise<boolean> {
    const head = await this.#head(id, owner);
    if (head === null) return false;
    const op = this.kv.atomic().delete([PREFIX, id]);
    for (let n = 0; n < head.chunks; n++) {
      op.delete(head.gen === undefined ? [PREFIX, id, n] : [PARTS_PREFIX, head.gen, n]);
    }
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
