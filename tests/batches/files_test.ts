import assert from "node:assert/strict";
import { CHUNK_BYTES, FileStore } from "../../src/batches/files.ts";

Deno.test("FileStore: a file over several chunks reads back whole and by range, for its owner only", async () => {
  await using kv = await Deno.openKv(":memory:");
  const store = new FileStore(kv, 86_400_000);
  const bytes = new Uint8Array(CHUNK_BYTES * 2 + 123).map((_, i) => i % 251);
  const file = await store.put({ owner: "k1", filename: "f.jsonl", purpose: "batch" }, bytes, 0);
  assert.equal(file.chunks, 3);
  assert.equal(file.bytes, bytes.length);
  assert.deepEqual(await store.bytes(file), bytes);
  // A range across a chunk boundary, and one inside the last chunk.
  const from = CHUNK_BYTES - 10;
  assert.deepEqual(await store.range(file, from, 30), bytes.subarray(from, from + 30));
  assert.deepEqual(
    await store.range(file, 2 * CHUNK_BYTES + 3, 100),
    bytes.subarray(2 * CHUNK_BYTES + 3, 2 * CHUNK_BYTES + 103),
  );
  assert.equal(await store.get(file.id, "k2"), null);
  assert.equal(await store.delete(file.id, "k2"), false);
  assert.equal(await store.delete(file.id, "k1"), true);
  assert.equal(await store.get(file.id, "k1"), null);
  assert.equal((await Array.fromAsync(kv.list({ prefix: ["file_chunks"] }))).length, 0);
});

Deno.test("FileStore: lists an owner's files newest first, paged by after", async () => {
  await using kv = await Deno.openKv(":memory:");
  const store = new FileStore(kv, 86_400_000);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const fields = { owner: "k1", filename: `${i}.jsonl`, purpose: "batch" as const };
    ids.push((await store.put(fields, new Uint8Array([1]), 1000 * i)).id);
  }
  await store.put({ owner: "k2", filename: "x", purpose: "batch" }, new Uint8Array([1]), 5000);
  const page = await store.list("k1", { limit: 2, order: "desc" });
  assert.deepEqual(page.files.map((f) => f.id), [ids[2], ids[1]]);
  assert.equal(page.hasMore, true);
  const rest = await store.list("k1", { limit: 2, order: "desc", after: ids[1]! });
  assert.deepEqual(rest.files.map((f) => f.id), [ids[0]]);
  assert.equal(rest.hasMore, false);
  const asc = await store.list("k1", { limit: 5, order: "asc", after: ids[0]! });
  assert.deepEqual(asc.files.map((f) => f.id), [ids[1], ids[2]]);
});

Deno.test("FileStore: a large file is kept in small chunks and read out in pieces; one stored in 60,000-byte chunks before reads as it was", async () => {
  await using kv = await Deno.openKv(":memory:");
  const store = new FileStore(kv, 86_400_000);
  const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
  const file = await store.put({ owner: "k1", filename: "big.jsonl", purpose: "batch" }, bytes, 0);
  const stored = await Array.fromAsync(kv.list<Uint8Array>({ prefix: ["file_chunks", file.id] }));
  assert.equal(stored.length, Math.ceil(bytes.length / CHUNK_BYTES));
  assert.ok(stored.every((e) => e.value.length <= CHUNK_BYTES));
  const pieces = await Array.fromAsync(store.chunks(file));
  assert.ok(pieces.length >= 4 && pieces.length <= 6, `${pieces.length} pieces`);
  assert.deepEqual(await store.bytes(file), bytes);
  assert.deepEqual(await store.range(file, 123_456, 5_000), bytes.subarray(123_456, 128_456));

  // As the version before wrote it: 60,000-byte chunks, a record without chunk_bytes.
  const old = { ...file, id: "file-old", chunks: 5 } as Record<string, unknown>;
  delete old.chunk_bytes;
  for (let n = 0; n < 5; n++) {
    await kv.set(["file_chunks", "file-old", n], bytes.slice(n * 60_000, (n + 1) * 60_000));
  }
  await kv.set(["files", "file-old"], old);
  const legacy = (await store.get("file-old", "k1"))!;
  assert.deepEqual(await store.range(legacy, 59_990, 30), bytes.subarray(59_990, 60_020));
  assert.deepEqual(await store.bytes(legacy), bytes);
  await kv.delete(["file_chunks", "file-old", 2]);
  await assert.rejects(() => store.range(legacy, 119_990, 30), /incomplete/);
});
