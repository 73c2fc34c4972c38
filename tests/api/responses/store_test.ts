import assert from "node:assert/strict";
import {
  MAX_ID_BYTES,
  MAX_STORED_BYTES,
  ownerOf,
  ResponseStore,
  type StoredResponse,
} from "../../../src/api/responses/store.ts";
import { ANONYMOUS } from "../../../src/auth/principal.ts";

function record(textBytes: number): StoredResponse {
  return {
    response: { id: "resp_1", object: "response" },
    input: [{ type: "message", role: "user", content: "x".repeat(textBytes) }],
    history: [{ type: "message", role: "user", content: "é".repeat(textBytes / 4) }],
  };
}

Deno.test("a record larger than one KV value is stored in chunks and read back whole", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new ResponseStore(kv);
  const big = record(300_000);
  assert.equal(await store.put("resp_1", "key:a", big), true);
  assert.deepEqual(await store.get("resp_1", "key:a"), big);
  let entries = 0;
  for await (const _ of kv.list({ prefix: ["responses", "resp_1"] })) entries++;
  assert.ok(entries > 5, `${entries} entries`);
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
