import assert from "node:assert/strict";
import { Logger } from "../../src/log/logger.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

Deno.test("Logger.timestamp writes what Date.toISOString writes, across seconds and years", () => {
  const logger = new Logger({ clock: new FakeClock(), output: new CapturedOutput() });
  const base = Date.UTC(2026, 0, 15, 12, 0, 0);
  const times = [
    0,
    1,
    999,
    1000,
    base,
    base + 7,
    base + 42,
    base + 999,
    base + 1000,
    base + 1001,
    base - 1,
    Date.UTC(1999, 11, 31, 23, 59, 59, 999),
    Date.UTC(2000, 0, 1),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1, 0, 0, 0, 5),
    base + 0.5,
  ];
  for (let i = 0; i < 2000; i++) times.push(base + Math.floor(i * 7919.37));
  for (const ms of times) {
    assert.equal(logger.timestamp(ms), new Date(ms).toISOString(), `at ${ms}`);
  }
});
