import assert from "node:assert/strict";
import { exportIntervalMs, ReaderTicks } from "../../src/telemetry/reader_ticks.ts";

Deno.test("exportIntervalMs reads OTEL_METRIC_EXPORT_INTERVAL as Deno does", () => {
  assert.equal(exportIntervalMs(undefined), 60_000);
  assert.equal(exportIntervalMs("1000"), 1000);
  assert.equal(exportIntervalMs("+250"), 250);
  assert.equal(exportIntervalMs("0"), 60_000, "0 is the default");
  assert.equal(exportIntervalMs("1.5"), 60_000, "not an integer");
  assert.equal(exportIntervalMs(" 100"), 60_000, "Rust's parse takes no spaces");
  assert.equal(exportIntervalMs("-5"), 60_000);
});

Deno.test("ReaderTicks: before the first ask, ticks are counted from the start", () => {
  let now = 100;
  const ticks = new ReaderTicks(1000, () => now);
  assert.equal(ticks.waitMs(), 0, "the first tick is 900 ms away");
  now = 800;
  assert.equal(ticks.waitMs(), 450, "250 ms margin: wait past the tick at 1000 and a margin");
  now = 1900;
  assert.equal(ticks.waitMs(), 250, "the tick at 1000 not seen yet: wait for it");
  ticks.observed();
  now = 2200;
  assert.equal(ticks.waitMs(), 0, "seen at 1900, the next at 2900");
});

Deno.test("ReaderTicks: no exit within a margin of an ask, nor of the next one", () => {
  let now = 5_000;
  const ticks = new ReaderTicks(1000, () => now);
  ticks.observed();
  assert.equal(ticks.waitMs(), 250, "just asked");
  now = 5_100;
  assert.equal(ticks.waitMs(), 150);
  now = 5_250;
  assert.equal(ticks.waitMs(), 0);
  now = 5_800;
  assert.equal(ticks.waitMs(), 450, "the next ask expected at 6000");
  now = 6_050;
  assert.equal(ticks.waitMs(), 250, "expected and not come: wait a margin more");
  ticks.observed();
  now = 6_300;
  assert.equal(ticks.waitMs(), 0);
});

Deno.test("ReaderTicks: the margin is a quarter of the interval, from 10 to 500 ms", () => {
  let now = 0;
  const short = new ReaderTicks(20, () => now);
  short.observed();
  assert.equal(short.waitMs(), 10);
  const long = new ReaderTicks(60_000, () => now);
  long.observed();
  now = 499;
  assert.equal(long.waitMs(), 1);
  now = 500;
  assert.equal(long.waitMs(), 0);
});

Deno.test("ReaderTicks.quiet gives up after the longest wait", async () => {
  // An ask expected every 40 ms that never comes: quiet() still resolves.
  const ticks = new ReaderTicks(40);
  ticks.observed();
  const started = performance.now();
  await ticks.quiet();
  assert.ok(performance.now() - started < 1_000);
});
