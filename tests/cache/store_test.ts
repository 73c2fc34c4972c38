import assert from "node:assert/strict";
import { CacheStore, CHUNK_BYTES, CHUNKS_PER_COMMIT } from "../../src/cache/store.ts";
import { countingKv } from "../support/counting_kv.ts";

function bytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff;
  return out;
}

Deno.test("an entry round-trips: in its manifest, in chunks of one commit, in several commits", async () => {
  using kv = await Deno.openKv(":memory:");
  const sizes = [
    10,
    CHUNK_BYTES,
    CHUNK_BYTES + 1,
    CHUNK_BYTES * CHUNKS_PER_COMMIT,
    CHUNK_BYTES * CHUNKS_PER_COMMIT * 2 + 5,
  ];
  for (const size of sizes) {
    const counted = countingKv(kv);
    const store = new CacheStore(counted.kv, 0);
    const data = bytes(size);
    await store.put("key:a", `k${size}`, data, { now: 1000, ttlMs: 60_000 });
    assert.deepEqual(await store.get("key:a", `k${size}`, 1000), data, `${size}`);
    const chunks = size <= CHUNK_BYTES ? 0 : Math.ceil(size / CHUNK_BYTES);
    const commits = Math.max(1, Math.ceil(chunks / CHUNKS_PER_COMMIT));
    // KV refuses a commit over its limits (800 KiB): these were within them.
    assert.equal(counted.counts.commits, commits, `${size}`);
  }
});

Deno.test("an entry expires by the injected clock, and scopes and keys do not mix", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new CacheStore(kv);
  const data = bytes(100);
  await store.put("key:a", "k", data, { now: 1000, ttlMs: 5000 });
  assert.deepEqual(await store.get("key:a", "k", 5999), data);
  assert.equal(await store.get("key:a", "k", 6000), null);
  assert.equal(await store.get("key:b", "k", 1000), null);
  assert.equal(await store.get("key:a", "other", 1000), null);
});

Deno.test("a chunked entry whose chunks do not match its manifest is not read", async () => {
  using kv = await Deno.openKv(":memory:");
  // Without the entries kept in memory, which would answer without reading the chunks.
  const store = new CacheStore(kv, 0);
  const data = bytes(CHUNK_BYTES * 3);
  await store.put("s", "k", data, { now: 0, ttlMs: 60_000 });
  const chunkKeys: Deno.KvKey[] = [];
  for await (const entry of kv.list({ prefix: ["cache", "s", "k"] })) {
    if (entry.key.length > 3) chunkKeys.push(entry.key);
  }
  assert.equal(chunkKeys.length, 3);
  // A changed chunk (same length) fails the digest; a missing one, the count.
  await kv.set(chunkKeys[1]!, new Uint8Array(CHUNK_BYTES));
  assert.equal(await store.get("s", "k", 0), null);
  await store.put("s", "k", data, { now: 0, ttlMs: 60_000 });
  assert.deepEqual(await store.get("s", "k", 0), data);
  const latest: Deno.KvKey[] = [];
  for await (const entry of kv.list({ prefix: ["cache", "s", "k"] })) {
    if (entry.key.length > 3) latest.push(entry.key);
  }
  // The rewrite went under a new generation: delete all chunks, the manifest finds none.
  for (const key of latest) await kv.delete(key);
  assert.equal(await store.get("s", "k", 0), null);
});

Deno.test("entries read or written last are kept in memory, bounded, and expire by the clock", async () => {
  using kv = await Deno.openKv(":memory:");
  const counted = countingKv(kv);
  const store = new CacheStore(counted.kv, 64 * 1024);
  const small = bytes(1000);
  await store.put("s", "a", small, { now: 0, ttlMs: 10_000 });
  const reads = counted.counts.reads;
  assert.deepEqual(await store.get("s", "a", 1), small);
  assert.equal(counted.counts.reads, reads, "answered from memory");
  // Another process's store (same KV) reads it from KV once, then from memory.
  const other = new CacheStore(counted.kv, 64 * 1024);
  assert.deepEqual(await other.get("s", "a", 1), small);
  assert.deepEqual(await other.get("s", "a", 2), small);
  assert.equal(counted.counts.reads, reads + 1);
  // Past its expiry neither memory nor KV answers.
  assert.equal(await store.get("s", "a", 10_000), null);
  // Past the bound the least recently used go: 9 entries of 8000 bytes in 64 KiB.
  for (let i = 0; i < 9; i++) {
    await store.put("s", `k${i}`, bytes(8000), { now: 0, ttlMs: 10_000 });
  }
  const before = counted.counts.reads;
  assert.ok(await store.get("s", "k8", 1));
  assert.equal(counted.counts.reads, before);
  assert.ok(await store.get("s", "k0", 1));
  assert.equal(counted.counts.reads, before + 1, "the oldest was read from KV again");
});
