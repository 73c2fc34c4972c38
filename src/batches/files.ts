/**
 * Files on KV (the Files API, docs/batches.md): a file's record and its bytes in small chunks
 * (`kv/parts.ts`: a large value makes every search of KV near it dearer), each with the file's
 * expiry; listed per owner (the key that uploaded it), newest first. Files stored before, in
 * chunks of 60,000 bytes, are read as they were.
 */
import { retryWhileBusy } from "../kv/busy.ts";
import { cutParts, PART_BYTES } from "../kv/parts.ts";
import { concatBytes } from "../http/bytes.ts";
import { timeOrderedId } from "./ids.ts";

/** Bytes per chunk. */
export const CHUNK_BYTES = PART_BYTES;
/** Bytes per chunk of a file stored before chunks were small (its record has no `chunk_bytes`). */
const LEGACY_CHUNK_BYTES = 60_000;
/** Chunks written per KV commit: 800 of 800 bytes with their ~50-byte keys are within KV's 800
 * KiB, 80 KiB of keys and 1,000 mutations a commit. */
const CHUNKS_PER_COMMIT = 800;
/** Chunks deleted per KV commit (KV takes 1,000 mutations). */
const DELETES_PER_COMMIT = 1000;
/** Bytes of a piece of a file's content as read out: chunks joined up to this much. */
const PIECE_BYTES = 64 * 1024;

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
  /** Bytes per chunk (absent: {@link LEGACY_CHUNK_BYTES}, a file stored before). */
  chunk_bytes?: number;
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
    fields: Omit<
      FileRecord,
      "bytes" | "chunks" | "chunk_bytes" | "created_at" | "expires_at" | "id"
    >,
    bytes: Uint8Array,
    nowMs: number,
    id = this.newId(nowMs),
  ): Promise<FileRecord> {
    const parts = bytes.length === 0 ? [] : cutParts(bytes);
    const chunks = parts.length;
    const expireIn = this.retentionMs;
    for (let first = 0; first < chunks; first += CHUNKS_PER_COMMIT) {
      await commit(() => {
        const op = this.kv.atomic();
        for (let n = first; n < Math.min(chunks, first + CHUNKS_PER_COMMIT); n++) {
          op.set(chunkKey(id, n), parts[n]!, { expireIn });
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
      chunk_bytes: CHUNK_BYTES,
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

  /** The file's bytes, in pieces of up to {@link PIECE_BYTES} (its chunks joined). */
  async *chunks(file: FileRecord): AsyncGenerator<Uint8Array> {
    const list = this.kv.list<Uint8Array>({ prefix: ["file_chunks", file.id] }, {
      batchSize: 1000,
    });
    let piece: Uint8Array[] = [];
    let bytes = 0;
    for await (const { value } of list) {
      if (bytes > 0 && bytes + value.length > PIECE_BYTES) {
        yield concatBytes(piece);
        piece = [];
        bytes = 0;
      }
      piece.push(value);
      bytes += value.length;
    }
    if (bytes > 0) yield concatBytes(piece);
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
    const size = file.chunk_bytes ?? LEGACY_CHUNK_BYTES;
    const first = Math.floor(offset / size);
    const last = Math.floor((offset + length - 1) / size);
    const out = new Uint8Array(length);
    let n = first;
    const list = this.kv.list<Uint8Array>({
      start: chunkKey(file.id, first),
      end: chunkKey(file.id, last + 1),
    }, { batchSize: 1000 });
    for await (const { key, value: chunk } of list) {
      if (key[2] !== n) break;
      const base = n * size;
      const from = Math.max(offset, base) - base;
      const to = Math.min(offset + length, base + chunk.length) - base;
      out.set(chunk.subarray(from, to), base + from - offset);
      n++;
    }
    if (n !== last + 1) throw new Error(`file ${file.id} is incomplete in KV`);
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
    for (let first = 0; first < file.chunks; first += DELETES_PER_COMMIT) {
      await commit(() => {
        const op = this.kv.atomic();
        for (let n = first; n < Math.min(file.chunks, first + DELETES_PER_COMMIT); n++) {
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
