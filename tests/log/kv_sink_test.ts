import assert from "node:assert/strict";
import {
  KvLogSink,
  LOG_PREFIX,
  type LogRow,
  ROW_RECORDS,
  rowRecords,
} from "../../src/log/kv_sink.ts";
import type { LogRecord } from "../../src/log/record.ts";
import { readUsage } from "../../src/log/usage.ts";
import { makeLogRecord } from "../support/log_records.ts";

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

function record(i: number, ms: number, extra: Partial<LogRecord> = {}): LogRecord {
  const id = `req_${String(i).padStart(4, "0")}`;
  return makeLogRecord({ request_id: id, prompt_tokens: 3, completion_tokens: 5, ...extra }, ms);
}

function add(sink: KvLogSink, r: LogRecord): void {
  sink.add(r, JSON.stringify(r));
}

async function rows(kv: Deno.Kv) {
  return await Array.fromAsync(kv.list<LogRow>({ prefix: [...LOG_PREFIX] }));
}

Deno.test("KvLogSink packs a flush into rows per arrival second, at most ROW_RECORDS each", async () => {
  using kv = await Deno.openKv(":memory:");
  const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 10_000 });
  const n = ROW_RECORDS * 2 + 5;
  for (let i = 0; i < n; i++) add(sink, record(i, T0 + 999));
  add(sink, record(n, T0 + 1000));
  add(sink, record(n + 1, T0 - 60_000));
  await sink.flush();
  const all = await rows(kv);
  const sizes = all.map((r) => [r.key[1], rowRecords(r.value).length]);
  sizes.sort((a, b) => Number(a[0]) - Number(b[0]) || Number(b[1]) - Number(a[1]));
  assert.deepEqual(sizes, [
    [T0 - 60_000, 1],
    [T0, ROW_RECORDS],
    [T0, ROW_RECORDS],
    [T0, 5],
    [T0 + 1000, 1],
  ]);
  const ids = all.flatMap((r) => rowRecords(r.value).map((x) => x.request_id)).sort();
  assert.equal(ids.length, n + 2);
  assert.equal(new Set(ids).size, n + 2);
  const usage = await readUsage(kv, "2026-01-15");
  assert.equal(usage.length, 1);
  assert.equal(usage[0]!.requests, n + 2);
  assert.equal(usage[0]!.prompt_tokens, 3 * (n + 2));
});

Deno.test("KvLogSink keeps a size note instead of content too large for a KV value", async () => {
  using kv = await Deno.openKv(":memory:");
  const sink = new KvLogSink({ kv, retentionDays: 7 });
  const big = "x".repeat(100_000);
  add(sink, record(1, T0, { content: { messages: [{ role: "user", content: big }] } }));
  add(sink, record(2, T0, { content: { messages: [{ role: "user", content: "small" }] } }));
  await sink.flush();
  const records = (await rows(kv)).flatMap((r) => rowRecords(r.value));
  const first = records.find((r) => r.request_id === "req_0001")!;
  const second = records.find((r) => r.request_id === "req_0002")!;
  assert.deepEqual(first.content, { truncated: true, bytes: 100_043 });
  assert.deepEqual(second.content, { messages: [{ role: "user", content: "small" }] });
});
