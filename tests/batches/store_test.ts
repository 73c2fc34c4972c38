import assert from "node:assert/strict";
import { type BatchRecord, BatchStore } from "../../src/batches/store.ts";
import { PART_BYTES } from "../../src/kv/parts.ts";

function record(id: string): BatchRecord {
  return {
    id,
    owner: "k1",
    owner_hash: "h",
    endpoint: "/v1/embeddings",
    input_file_id: "file-x",
    completion_window: "24h",
    status: "in_progress",
    metadata: null,
    errors: null,
    output_file_id: null,
    error_file_id: null,
    created_at: 0,
    in_progress_at: 0,
    expires_at: 86_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    total: 3,
    queued: 3,
    outcome: null,
  };
}

Deno.test("BatchStore: a result is written once, long ones in parts, never after the batch changed", async () => {
  await using kv = await Deno.openKv(":memory:");
  const store = new BatchStore(kv, 86_400_000);
  await store.create(record("batch_1"), { kind: "noop" });
  const entry = await store.entry("batch_1") as Deno.KvEntry<BatchRecord>;
  // An embeddings answer of a few MB: more than one KV commit holds.
  const long = JSON.stringify({ data: "x".repeat(2_500_000) });
  assert.equal(await store.writeResult(entry, 0, true, long), "written");
  assert.equal(await store.writeResult(entry, 0, true, long), "exists");
  assert.equal(await store.writeResult(entry, 1, false, "{}"), "written");
  assert.deepEqual(await store.counts("batch_1"), { done: 2, failed: 1 });
  const results = await Array.fromAsync(store.results("batch_1"));
  assert.deepEqual(results, [[true, long], [false, "{}"]]);
  // Cancelled meanwhile: a late line's result is refused.
  await store.update("batch_1", (b) => ({ ...b, status: "cancelling" }));
  assert.equal(await store.writeResult(entry, 2, true, "{}"), "stale");
  assert.deepEqual(await store.counts("batch_1"), { done: 2, failed: 1 });
});

Deno.test("BatchStore: a result over a few hundred characters is kept in small parts of UTF-8 with its record; one kept in text parts before reads as it was", async () => {
  await using kv = await Deno.openKv(":memory:");
  const store = new BatchStore(kv, 86_400_000);
  await store.create(record("batch_2"), { kind: "noop" });
  const entry = await store.entry("batch_2") as Deno.KvEntry<BatchRecord>;
  const answer = JSON.stringify({ choices: [{ message: { content: "héllo 😀 ".repeat(300) } }] });
  let commits = 0;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    commits++;
    return atomic();
  };
  assert.equal(await store.writeResult(entry, 0, true, answer), "written");
  assert.equal(commits, 1, "the parts go with the record");
  const parts = await Array.fromAsync(kv.list({ prefix: ["batch_result_parts", "batch_2"] }));
  assert.ok(parts.length > 3);
  assert.ok(parts.every((p) => p.value instanceof Uint8Array && p.value.length <= PART_BYTES));
  // As the version before kept a long result: parts of up to 20,000 characters.
  await kv.set(["batch_results", "batch_2", 1], { ok: true, parts: 2 });
  await kv.set(["batch_result_parts", "batch_2", 1, 0], "é".repeat(20_000));
  await kv.set(["batch_result_parts", "batch_2", 1, 1], "tail");
  assert.deepEqual(await Array.fromAsync(store.results("batch_2")), [
    [true, answer],
    [true, "é".repeat(20_000) + "tail"],
  ]);
});
