import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CacheStore } from "../../src/cache/store.ts";
import { FileStore } from "../../src/batches/files.ts";
import { ResponseStore } from "../../src/api/responses/store.ts";
import { cutParts, PART_BYTES } from "../../src/kv/parts.ts";
import { concatBytes } from "../../src/http/bytes.ts";
import { KvLogSink } from "../../src/log/kv_sink.ts";
import { makeLogRecord } from "../support/log_records.ts";

Deno.test("cutParts cuts into views of at most PART_BYTES that concatBytes joins back", () => {
  for (const size of [0, 1, PART_BYTES, PART_BYTES + 1, PART_BYTES * 3, PART_BYTES * 3 + 7]) {
    const bytes = Uint8Array.from({ length: size }, (_, i) => i % 251);
    const parts = cutParts(bytes);
    assert.equal(parts.length, Math.max(1, Math.ceil(size / PART_BYTES)), `${size} bytes`);
    assert.ok(parts.every((p) => p.length <= PART_BYTES && p.buffer === bytes.buffer));
    assert.ok(parts.slice(0, -1).every((p) => p.length === PART_BYTES));
    assert.deepEqual(concatBytes(parts), bytes);
  }
});

Deno.test("log rows, cached answers, stored responses and files leave no KV entry overflowing SQLite's page", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite`;
  try {
    const kv = await Deno.openKv(path);
    const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 10_000 });
    for (let i = 0; i < 300; i++) {
      const record = makeLogRecord({ request_id: `req_${i}`, model: `模型-${i}` }, Date.now());
      sink.add(record, JSON.stringify(record));
    }
    await sink.flush();
    const cache = new CacheStore(kv, 0);
    const answer = new TextEncoder().encode(JSON.stringify({ text: "é".repeat(40_000) }));
    await cache.put("key:" + "k".repeat(40), "f".repeat(64), answer, { now: 0, ttlMs: 60_000 });
    const responses = new ResponseStore(kv);
    const record = {
      response: { id: "resp_1" },
      input: [{ text: "x".repeat(200_000) }],
      history: [],
    };
    assert.equal(await responses.put("resp_" + "r".repeat(200), "key:a", record), true);
    const files = new FileStore(kv, 86_400_000);
    const upload = new Uint8Array(100_000).fill(65);
    await files.put({ owner: "k1", filename: "in.jsonl", purpose: "batch" }, upload, Date.now());
    kv.close();
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const pages = db.prepare(
        "select pagetype, count(*) as n from dbstat where name = 'kv' group by pagetype",
      ).all() as { pagetype: string; n: number }[];
      assert.ok(pages.some((p) => p.pagetype === "leaf" && p.n > 50), JSON.stringify(pages));
      assert.deepEqual(pages.filter((p) => p.pagetype === "overflow"), []);
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
