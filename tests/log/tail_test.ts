import assert from "node:assert/strict";
import { KvLogSink } from "../../src/log/kv_sink.ts";
import { LogTail } from "../../src/log/tail.ts";
import { makeLogRecord } from "../support/log_records.ts";
import { FakeClock } from "../support/server.ts";

Deno.test("LogTail: each row committed since it began, once, whichever sink wrote it", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const sink = new KvLogSink({ kv, retentionDays: 7, clock, intervalMs: 10_000 });
  const other = new KvLogSink({ kv, retentionDays: 7, clock, intervalMs: 10_000 });
  const add = (s: KvLogSink, id: string) => {
    const record = makeLogRecord({ request_id: id }, clock.now());
    s.add(record, JSON.stringify(record));
  };
  add(sink, "before");
  await sink.flush();
  clock.advance(1);
  const tail = new LogTail(kv, clock);
  assert.deepEqual(await tail.next(), [], "a row committed before it began is not read");
  add(sink, "a");
  add(sink, "b");
  await sink.flush();
  clock.advance(1000);
  add(other, "c");
  await other.flush();
  assert.deepEqual((await tail.next()).map((r) => r.request_id), ["a", "b", "c"]);
  assert.deepEqual(await tail.next(), [], "rows already read are not read again");
  // A row committed with an earlier time than one already read (a slow commit) is still read.
  clock.advance(-500);
  add(sink, "late");
  await sink.flush();
  assert.deepEqual((await tail.next()).map((r) => r.request_id), ["late"]);
});

Deno.test("LogTail: a row committed in the same millisecond, before it began, is not read; one after is", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const sink = new KvLogSink({ kv, retentionDays: 7, clock, intervalMs: 10_000 });
  const add = (id: string) => {
    const record = makeLogRecord({ request_id: id }, clock.now());
    sink.add(record, JSON.stringify(record));
  };
  add("before");
  await sink.flush();
  const tail = new LogTail(kv, clock);
  add("after");
  await sink.flush();
  assert.deepEqual((await tail.next()).map((r) => r.request_id), ["after"]);
});
