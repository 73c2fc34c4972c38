/**
 * Files on KV (the Files API, docs/batches.md): a file's record and its bytes in chunks under
 * 64 KiB (KV's value limit), each with the file's expiry; listed per owner (the key that
 * uploaded it), newest first.
 */
import { retryWhileBusy } from "../kv/busy.ts";
import { timeOrderedId } from "./ids.ts";

/** Bytes per chunk: under KV's 64 KiB value limit. */
export const CHUNK_BYTES = 60_000;
/** Chunks written per KV commit (KV's commit limit is 800 KiB of values). */
const CHUNKS_PER_COMMIT = 10;

/** What a file is for (OpenAI's `purpose`): uploaded inputs, and the outputs batches write. */
export type FilePurpose = "batch" | "batch_output";

/** A file's record, as stored. */
export interface FileRecord {
  id: string;
  /** The id of the key that owns it. */
  owner: string;
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  expires_at: number;
  filename: string;
  purpose: FilePurpose;
  chunks: number;
  /** Lines of a batch input file. */
  lines?: number;
}

/** OpenAI's file object. */
export function fileObject(file: FileRecord): Record<string, unknown> {
  return {
    id: file.id,
    object: "file",
    bytes: file.bytes,
    created_at: file.created_at,
    expires_at: file.expires_at,
    filename: file.filename,
    purpose: file.purpose,
    status: "processed",
    status_details: null,
  };
}

const fileKey = (id: string): Deno.KvKey => ["files", id];
const chunkKey = (id: string, n: number): Deno.KvKey => ["file_chunks", id, n];
const ownerKey = (owner: string, id: string): Deno.KvKey => ["files_by_owner", owner, id];

/** The files on a KV store. */
export class FileStore {
  constructor(readonly kv: Deno.Kv, readonly retentionMs: number) {}

  /** A new file id. */
  newId(nowMs: number): string {
    return timeOrderedId("file-", nowMs);
  }

  /** Stores `bytes` as file `id` (chunks first, its record last: a file is listed only once
   * whole). Writing the same id again writes the same file (for retried finalizing). */
  async put(
    fields: Omit<FileRecord, "bytes" | "chunks" | "created_at" | "expires_at" | "id">,
    bytes: Uint8Array,
    nowMs: number,
    id = this.newId(nowMs),
  ): Promise<FileRecord> {
    const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
    const expireIn = this.retentionMs;
    for (let first = 0; first < chunks; first += CHUNKS_PER_COMMIT) {
      await commit(() => {
        const op = this.kv.atomic();
        for (let n = first; n < Math.min(chunks, first + CHUNKS_PER_COMMIT); n++) {
          op.set(chunkKey(id, n), bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), {
            expireIn,
          });
        }
        return op;
      });
    }
    const record: FileRecord = {
      ...fields,
      id,
      bytes: bytes.length,
      created_at: Math.floor(nowMs / 1000),
      expires_at: Math.floor((nowMs + expireIn) / 1000),
      chunks,
    };
    await commit(() =>
      this.kv.atomic()
        .set(fileKey(id), record, { expireIn })
        .set(ownerKey(record.owner, id), true, { expireIn })
    );
    return record;
  }

  /** File `id` if `owner` owns it, else `null` (another key's file is as absent as none). */
  async get(id: string, owner: string): Promise<FileRecord | null> {
    const entry = await this.kv.get<FileRecord>(fileKey(id));
    return entry.value !== null && entry.value.owner === owner ? entry.value : null;
  }

  /** The file's bytes, chunk by chunk. */
  async *chunks(file: FileRecord): AsyncGenerator<Uint8Array> {
    for await (const entry of this.kv.list<Uint8Array>({ prefix: ["file_chunks", file.id] })) {
      yield entry.value;
    }
  }

  /** The whole file's bytes. */
  async bytes(file: FileRecord): Promise<Uint8Array> {
    const out = new Uint8Array(file.bytes);
    let at = 0;
    for await (const chunk of this.chunks(file)) {
      out.set(chunk.subarray(0, out.length - at), at);
      at += chunk.length;
    }
    if (at !== file.bytes) throw new Error(`file ${file.id} is incomplete in KV`);
    return out;
  }

  /** Bytes `[offset, offset + length)` of the file (a line of it). */
  async range(file: FileRecord, offset: number, length: number): Promise<Uint8Array> {
    const first = Math.floor(offset / CHUNK_BYTES);
    const last = Math.floor((offset + length - 1) / CHUNK_BYTES);
    const out = new Uint8Array(length);
    for (let n = first; n <= last; n++) {
      const chunk = (await this.kv.get<Uint8Array>(chunkKey(file.id, n))).value;
      if (chunk === null) throw new Error(`file ${file.id} is incomplete in KV`);
      const base = n * CHUNK_BYTES;
      const from = Math.max(offset, base) - base;
      const to = Math.min(offset + length, base + chunk.length) - base;
      out.set(chunk.subarray(from, to), base + from - offset);
    }
    return out;
  }

  /** The owner's files, newest first, after file `after` (exclusive); `limit` at most. */
  async list(
    owner: string,
    options: { limit: number; after?: string; order: "asc" | "desc"; purpose?: string },
  ): Promise<{ files: FileRecord[]; hasMore: boolean }> {
    const prefix = ["files_by_owner", owner];
    const bound = options.after !== undefined ? [...prefix, options.after] : undefined;
    const reverse = options.order === "desc";
    const selector: Deno.KvListSelector = bound === undefined
      ? { prefix }
      : reverse
      ? { prefix, end: bound }
      : { prefix, start: [...bound, ""] };
    const files: FileRecord[] = [];
    for await (const entry of this.kv.list({ ...selector } as Deno.KvListSelector, { reverse })) {
      const id = String(entry.key[2]);
      if (id === options.after) continue;
      const file = await this.get(id, owner);
      if (file === null || (options.purpose && file.purpose !== options.purpose)) continue;
      if (files.length === options.limit) return { files, hasMore: true };
      files.push(file);
    }
    return { files, hasMore: false };
  }

  /** Deletes file `id` of `owner`; `false` if there was none. */
  async delete(id: string, owner: string): Promise<boolean> {
    const file = await this.get(id, owner);
    if (file === null) return false;
    await commit(() => this.kv.atomic().delete(fileKey(id)).delete(ownerKey(owner, id)));
    for (let first = 0; first < file.chunks; first += 100) {
      await commit(() => {
        const op = this.kv.atomic();
        for (let n = first; n < Math.min(file.chunks, first + 100); n++) {
          op.delete(chunkKey(id, n));
        }
        return op;
      });
    }
    return true;
  }
}

/** Commits the operation `build` makes, which checks nothing: only a store failure stops it
 * (a busy store is tried again). */
async function commit(build: () => Deno.AtomicOperation): Promise<void> {
  const result = await retryWhileBusy(() => build().commit());
  if (!result.ok) throw new Error("a KV commit without checks failed");
}
