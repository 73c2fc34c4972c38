import assert from "node:assert/strict";
import {
  MAX_ID_BYTES,
  MAX_STORED_BYTES,
  ownerOf,
  ResponseStore,
  type StoredResponse,
} from "../../../src/api/responses/store.ts";
import { ANONYMOUS } from "../../../src/auth/principal.ts";
import { PART_BYTES } from "../../../src/kv/parts.ts";

function record(textBytes: number): StoredResponse {
  return {
    response: { id: "resp_1", object: "response" },
    input: [{ type: "message", role: "user", content: "x".repeat(textBytes) }],
    history: [{ type: "message", role: "user", content: "é".repeat(textBytes / 4) }],
  };
}

Deno.test("a record is stored in parts of at most PART_BYTES and read back whole, up to the bound in one commit", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  const big = record(300_000);
  assert.equal(await store.put("resp_1", "key:a", big), true);
  assert.deepEqual(await store.get("resp_1", "key:a"), big);
  const parts = await Array.fromAsync(kv.list({ prefix: ["response_parts"] }));
  assert.ok(parts.length > 500, `${parts.length} parts`);
  for (const { value } of parts) {
    assert.ok(value instanceof Uint8Array && value.length <= PART_BYTES);
  }
  // Just under the bound, with the longest id: 820 parts, and keys within KV's 80 KiB a commit.
  const largest = record(436_000);
  const bytes = new TextEncoder().encode(JSON.stringify(largest)).length;
  assert.ok(bytes > MAX_STORED_BYTES - 10_000 && bytes <= MAX_STORED_BYTES, `${bytes} bytes`);
  const longId = "resp_" + "b".repeat(MAX_ID_BYTES - 5);
  assert.equal(await store.put(longId, "key:a", largest), true);
  assert.deepEqual(await store.get(longId, "key:a"), largest);
});

Deno.test("a record stored before parts (60 KiB chunks under its id) is still read and deleted", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  const old = record(100_000);
  const bytes = new TextEncoder().encode(JSON.stringify(old));
  const chunk = 60 * 1024;
  const chunks = Math.ceil(bytes.length / chunk);
  await kv.set(["responses", "resp_old"], { owner: "key:a", chunks });
  for (let n = 0; n < chunks; n++) {
    await kv.set(["responses", "resp_old", n], bytes.slice(n * chunk, (n + 1) * chunk));
  }
  assert.deepEqual(await store.get("resp_old", "key:a"), old);
  assert.equal(await store.delete("resp_old", "key:a"), true);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["responses"] })), []);
});

Deno.test("only its owner gets or deletes a response; deleting removes every chunk", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  await store.put("resp_1", "key:a", record(100_000));
  assert.equal(await store.get("resp_1", "key:b"), null);
  assert.equal(await store.get("resp_1", ownerOf(ANONYMOUS)), null);
  assert.equal(await store.delete("resp_1", "key:b"), false);
  assert.equal(await store.delete("resp_1", "key:a"), true);
  assert.equal(await store.get("resp_1", "key:a"), null);
  let entries = 0;
  for await (const _ of kv.list({ prefix: ["responses"] })) entries++;
  for await (const _ of kv.list({ prefix: ["response_parts"] })) entries++;
  assert.equal(entries, 0);
  assert.equal(await store.delete("resp_1", "key:a"), false);
});

Deno.test("a record over the bound is not stored", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  assert.equal(await store.put("resp_2", "anonymous", record(MAX_STORED_BYTES)), false);
  assert.equal(await store.get("resp_2", "anonymous"), null);
});

Deno.test("an id too long for a KV key is never found, nor stored (KV would throw)", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  const id = "resp_" + "a".repeat(MAX_ID_BYTES);
  assert.equal(await store.get(id, "key:a"), null);
  assert.equal(await store.delete(id, "key:a"), false);
  assert.equal(await store.put(id, "key:a", record(10)), false);
  // Bytes, not characters: 200 three-byte characters are over the bound too.
  assert.equal(await store.get("€".repeat(200), "key:a"), null);
  const longest = "a".repeat(MAX_ID_BYTES);
  assert.equal(await store.put(longest, "key:a", record(10)), true);
  assert.deepEqual(await store.get(longest, "key:a"), record(10));
});
