import assert from "node:assert/strict";
import { KvLogSink, LOG_PREFIX, logRows, ROW_RECORDS } from "../../src/log/kv_sink.ts";
import { PART_BYTES } from "../../src/kv/parts.ts";
import { concatBytes } from "../../src/http/bytes.ts";
import { inflateRawSync } from "node:zlib";
import { Logger } from "../../src/log/logger.ts";
import type { LogRecord } from "../../src/log/record.ts";
import { readChecks } from "../../src/log/checks.ts";
import { readUsage } from "../../src/log/usage.ts";
import { makeLogRecord } from "../support/log_records.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

function record(i: number, ms: number, extra: Partial<LogRecord> = {}): LogRecord {
  const id = `req_${String(i).padStart(4, "0")}`;
  return makeLogRecord({ request_id: id, prompt_tokens: 3, completion_tokens: 5, ...extra }, ms);
}

function add(sink: KvLogSink, r: LogRecord): void {
  sink.add(r, JSON.stringify(r));
}

async function rows(kv: Deno.Kv) {
  return await Array.fromAsync(logRows(kv.list({ prefix: [...LOG_PREFIX] })));
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
  const sizes = all.map((r) => [r.bucket, r.records.length]);
  sizes.sort((a, b) => Number(a[0]) - Number(b[0]) || Number(b[1]) - Number(a[1]));
  assert.deepEqual(sizes, [
    [T0 - 60_000, 1],
    [T0, ROW_RECORDS],
    [T0, ROW_RECORDS],
    [T0, 5],
    [T0 + 1000, 1],
  ]);
  const ids = all.flatMap((r) => r.records.map((x) => x.request_id)).sort();
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
  const records = (await rows(kv)).flatMap((r) => r.records);
  const first = records.find((r) => r.request_id === "req_0001")!;
  const second = records.find((r) => r.request_id === "req_0002")!;
  assert.deepEqual(first.content, { truncated: true, bytes: 100_043 });
  assert.deepEqual(second.content, { messages: [{ role: "user", content: "small" }] });
});

/** All records kept in KV. */
async function stored(kv: Deno.Kv): Promise<LogRecord[]> {
  return (await rows(kv)).flatMap((r) => r.records);
}

/** A KV store whose atomic operations fail on commit (as KV fails one with a key or value it
 * will not take) when they write a log row holding `marker`; and that counts its commits. */
function refusingKv(kv: Deno.Kv, marker: string): { kv: Deno.Kv; commits: () => number } {
  let commits = 0;
  const wrapped = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const set = op.set.bind(op);
          const commit = op.commit.bind(op);
          // The parts of each log row it sets, by row id.
          const parts = new Map<unknown, Uint8Array[]>();
          op.set = (key, value, options) => {
            if (key[0] === LOG_PREFIX[0] && value instanceof Uint8Array) {
              parts.set(key[2], [...parts.get(key[2]) ?? [], value]);
            }
            return set(key, value, options);
          };
          op.commit = () => {
            commits++;
            const refuse = [...parts.values()].some((row) =>
              new TextDecoder().decode(inflateRawSync(concatBytes(row))).includes(marker)
            );
            return refuse ? Promise.reject(new TypeError("Value refused")) : commit();
          };
          return op;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: wrapped, commits: () => commits };
}

Deno.test("a 3,000-character model and a 70 KB path logged with 59 others in one batch: all 60 kept, the long one bounded, usage counted", async () => {
  using kv = await Deno.openKv(":memory:");
  const errors: unknown[] = [];
  const sink = new KvLogSink({
    kv,
    retentionDays: 7,
    intervalMs: 10_000,
    onError: (e) => errors.push(e),
  });
  const output = new CapturedOutput();
  const logger = new Logger({ clock: new FakeClock(T0), output, sinks: [sink] });
  const model = "m".repeat(3000);
  for (let i = 0; i < 60; i++) {
    logger.request(
      i === 30
        ? record(i, T0, { model, path: "/v1/chat/completions/" + "p".repeat(70_000), status: 404 })
        : record(i, T0),
    );
  }
  await logger.flush();
  assert.deepEqual(errors, []);
  const records = await stored(kv);
  assert.equal(records.length, 60);
  const long = records.find((r) => r.request_id === "req_0030")!;
  assert.equal(long.path.length, 256);
  assert.ok(long.path.startsWith("/v1/chat/completions/ppp"));
  assert.ok(long.path.endsWith("…[70021 chars]"));
  assert.equal(long.model!.length, 128);
  assert.ok(long.model!.endsWith("…[3000 chars]"));
  assert.deepEqual(output.records().find((r) => r.request_id === "req_0030"), { ...long });
  const usage = await readUsage(kv, "2026-01-15");
  assert.deepEqual(
    usage.map((u) => [u.model, u.requests, u.errors]),
    [[long.model, 1, 1], ["sim-chat", 59, 0]],
  );
  assert.equal(sink.dropped, 0);
});

Deno.test("usage keys stay within KV's key limit whatever a record holds", async () => {
  using kv = await Deno.openKv(":memory:");
  const errors: unknown[] = [];
  const sink = new KvLogSink({ kv, retentionDays: 7, onError: (e) => errors.push(e) });
  const wide = "😀".repeat(1500); // 6,000 UTF-8 bytes
  add(sink, record(1, T0, { model: wide + "a", key_id: wide }));
  add(sink, record(2, T0, { model: wide + "b", key_id: wide }));
  add(sink, record(3, T0, { model: wide + "b", key_id: wide }));
  await sink.flush();
  assert.deepEqual(errors, []);
  assert.equal((await stored(kv)).length, 3);
  const usage = await readUsage(kv, "2026-01-15");
  assert.deepEqual(usage.map((u) => u.requests).sort(), [1, 2], "distinct long models stay apart");
  for (const row of usage) {
    assert.ok(row.model!.length <= 128 && row.key_id!.length <= 128);
    assert.match(row.model!, /…\[3001 chars\]#[0-9a-f]{8}$/);
  }
});

Deno.test("a batch KV refuses for one record loses only that record, reported once without its content", async () => {
  using memory = await Deno.openKv(":memory:");
  const { kv } = refusingKv(memory, "req_0007");
  const errors: unknown[] = [];
  const sink = new KvLogSink({
    kv,
    retentionDays: 7,
    intervalMs: 10_000,
    onError: (e) => errors.push(e),
  });
  for (let i = 0; i < 60; i++) {
    add(sink, record(i, T0 + (i % 3) * 1000, { model: i === 7 ? "secret-model" : "sim-chat" }));
  }
  await sink.flush();
  const ids = (await stored(memory)).map((r) => r.request_id);
  assert.equal(ids.length, 59);
  assert.ok(!ids.includes("req_0007"));
  const usage = await readUsage(memory, "2026-01-15");
  assert.deepEqual(usage.map((u) => [u.model, u.requests]), [["sim-chat", 59]]);
  assert.equal(errors.length, 1);
  const message = (errors[0] as Error).message;
  assert.match(
    message,
    /^1 of 60 log records could not be written to KV and were dropped: TypeError: Value refused$/,
  );
  assert.ok(!message.includes("secret-model") && !message.includes("req_0007"));
  assert.equal(sink.dropped, 1);
});

Deno.test("a batch that meets a busy store is tried again whole, not split", async () => {
  using memory = await Deno.openKv(":memory:");
  let busy = 2;
  let commits = 0;
  const kv = new Proxy(memory, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            commits++;
            return busy-- > 0 ? Promise.reject(new Error("database is locked")) : commit();
          };
          return op;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 10_000 });
  for (let i = 0; i < 20; i++) add(sink, record(i, T0));
  await sink.flush();
  assert.equal((await stored(memory)).length, 20);
  assert.equal(commits, 3);
});

Deno.test("past logs.max_records_per_minute records go to stdout only, counted, with one warning a minute", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock(T0 + 5_000);
  const output = new CapturedOutput();
  const logger = new Logger({ clock, output });
  const sink = new KvLogSink({
    kv,
    retentionDays: 7,
    intervalMs: 10_000,
    maxRecordsPerMinute: 10,
    clock,
    onWarning: (message) => logger.warn(message),
  });
  logger.addSink(sink);
  for (let i = 0; i < 25; i++) {
    logger.request(record(i, clock.now()));
    clock.advance(1000);
  }
  await logger.flush();
  assert.equal((await stored(kv)).length, 10);
  assert.equal(output.records().length, 25);
  assert.equal(sink.dropped, 15);
  assert.equal(logger.recordsNotStored, 15);
  const warnings = () => output.err.trimEnd().split("\n").filter((l) => l !== "");
  assert.equal(warnings().length, 1);
  assert.match(JSON.parse(warnings()[0]!).message, /more than 10 request records this minute/);

  clock.advance(60_000);
  for (let i = 25; i < 37; i++) logger.request(record(i, clock.now()));
  await logger.flush();
  assert.equal((await stored(kv)).length, 20, "the next minute stores again");
  assert.equal(output.records().length, 37);
  assert.equal(logger.recordsNotStored, 17);
  assert.equal(warnings().length, 2);
  const usage = await readUsage(kv, "2026-01-15");
  assert.equal(usage[0]!.requests, 20, "usage counts the stored records");
});

Deno.test("a flush of 800 records of 800 keys keeps every commit within KV's 1,000 mutations: none falls back to one commit per record", async () => {
  using kv = await Deno.openKv(":memory:");
  const errors: unknown[] = [];
  let commits = 0;
  const sink = new KvLogSink({
    kv,
    retentionDays: 7,
    intervalMs: 10_000,
    onError: (e) => errors.push(e),
    onCommit: () => commits++,
  });
  const n = 8 * ROW_RECORDS;
  // Each record its own key: 4 usage counters each (requests, errors, prompt and completion).
  for (let i = 0; i < n; i++) {
    add(sink, record(i, T0, { key_id: `key_${i}`, status: 500 }));
  }
  await sink.flush();
  assert.deepEqual(errors, []);
  const ids = (await rows(kv)).flatMap((r) => r.records.map((x) => x.request_id));
  assert.equal(new Set(ids).size, n);
  const usage = await readUsage(kv, "2026-01-15");
  assert.equal(usage.length, n);
  assert.ok(usage.every((u) => u.requests === 1 && u.errors === 1 && u.prompt_tokens === 3));
  // 8 rows of 100 records and 400 counters each: two rows a commit (802 mutations), not one a
  // record (800 commits) after a rejected commit of 3,216.
  assert.ok(commits <= 8, `${commits} commits`);
});

Deno.test("usage and check counters older than usage_retention_days are deleted once a day, after a write", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock(T0);
  const sink = new KvLogSink({
    kv,
    retentionDays: 7,
    usageRetentionDays: 3,
    intervalMs: 10_000,
    clock,
  });
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const DAY = 86_400_000;
  // Four days of one record each, with a cache result (a check counter), written as they come.
  for (let d = 0; d < 4; d++) {
    clock.ms = T0 + d * DAY;
    add(sink, record(d, T0 + d * DAY, { cache: "hit" }));
    await sink.flush();
  }
  const days = async () => [
    ...new Set((await Array.fromAsync(kv.list({ prefix: ["usage"] }))).map((e) => e.key[1])),
  ];
  // On the fourth day, with three days kept, the first day's counters went.
  assert.deepEqual(await days(), [day(T0 + DAY), day(T0 + 2 * DAY), day(T0 + 3 * DAY)]);
  assert.equal((await readChecks(kv, day(T0))).length, 0);
  assert.equal((await readChecks(kv, day(T0 + DAY))).length, 1);
  // The same day again sweeps no more (once a day): a counter written back for an old day stays.
  await kv.atomic().sum(["usage", day(T0), "", "", "requests"], 1n).commit();
  add(sink, record(9, T0 + 3 * DAY));
  await sink.flush();
  assert.equal((await days()).length, 4);
  clock.ms = T0 + 4 * DAY;
  add(sink, record(10, T0 + 4 * DAY));
  await sink.flush();
  assert.deepEqual(await days(), [day(T0 + 2 * DAY), day(T0 + 3 * DAY), day(T0 + 4 * DAY)]);
});

Deno.test("a row is kept compressed, in parts of at most PART_BYTES, and reads back whole", async () => {
  using kv = await Deno.openKv(":memory:");
  const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 10_000 });
  const written: LogRecord[] = [];
  for (let i = 0; i < 40; i++) {
    // Content that does not compress (random), with multi-byte characters.
    const noise = Array.from({ length: 12 }, () => crypto.randomUUID()).join("模😀");
    const r = record(i, T0, { model: `模型-😀-${i}`, content: { messages: [{ content: noise }] } });
    written.push(r);
    add(sink, r);
  }
  await sink.flush();
  const entries = await Array.fromAsync(kv.list({ prefix: [...LOG_PREFIX] }));
  assert.ok(entries.length > 10, `${entries.length} entries`);
  for (const { value } of entries) {
    assert.ok(value instanceof Uint8Array && value.length <= PART_BYTES && value.length > 0);
  }
  const read = (await rows(kv)).flatMap((r) => r.records);
  assert.deepEqual(read.map((r) => ({ ...r })), written.map((r) => JSON.parse(JSON.stringify(r))));
  // A row of 100 ordinary records is a sixth or less of its text.
  using small = await Deno.openKv(":memory:");
  const plain = new KvLogSink({ kv: small, retentionDays: 7, intervalMs: 10_000 });
  let textBytes = 0;
  for (let i = 0; i < 100; i++) {
    const r = record(i, T0, { request_id: `req_${crypto.randomUUID()}` });
    textBytes += JSON.stringify(r).length + 1;
    add(plain, r);
  }
  await plain.flush();
  const kept = (await Array.fromAsync(small.list<Uint8Array>({ prefix: [...LOG_PREFIX] })))
    .reduce((n, e) => n + e.value.length, 0);
  assert.ok(kept * 5 < textBytes, `${kept} bytes kept of ${textBytes}`);
});

Deno.test("logRows reads rows of one value (as the version before wrote them) beside parts, forwards and in reverse, and leaves out a row missing a part", async () => {
  using kv = await Deno.openKv(":memory:");
  const legacy = record(1, T0);
  await kv.set([...LOG_PREFIX, T0, "old-row"], { lines: JSON.stringify(legacy) });
  const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 10_000 });
  const noise = Array.from({ length: 100 }, () => crypto.randomUUID()).join();
  add(sink, record(2, T0 + 1000, { content: { messages: [{ content: noise }] } }));
  add(sink, record(3, T0 + 2000));
  await sink.flush();
  const ids = async (options?: Deno.KvListOptions) => {
    const list = kv.list({ prefix: [...LOG_PREFIX] }, options);
    return (await Array.fromAsync(logRows(list))).flatMap((r) =>
      r.records.map((x) => x.request_id)
    );
  };
  assert.deepEqual(await ids(), ["req_0001", "req_0002", "req_0003"]);
  assert.deepEqual(await ids({ reverse: true }), ["req_0003", "req_0002", "req_0001"]);
  assert.deepEqual(await ids({ batchSize: 1 }), ["req_0001", "req_0002", "req_0003"]);
  // The second row has several parts; without its middle one it is not read (it expired while
  // listed), the rows beside it are.
  const parts = await Array.fromAsync(kv.list({ prefix: [...LOG_PREFIX, T0 + 1000] }));
  assert.ok(parts.length >= 3, `${parts.length} parts`);
  await kv.delete(parts[1]!.key);
  assert.deepEqual(await ids(), ["req_0001", "req_0003"]);
  assert.deepEqual(await ids({ reverse: true }), ["req_0003", "req_0001"]);
});
