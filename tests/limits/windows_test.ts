import assert from "node:assert/strict";
import {
  blockingWindow,
  formatDuration,
  isUnlimited,
  limitsFor,
  retryAfterSeconds,
  tightestWindow,
  tokenLimitOf,
  type WindowState,
} from "../../src/limits/windows.ts";
import type { KeyRecord } from "../../src/auth/principal.ts";
import { testConfig } from "../support/server.ts";

Deno.test("formatDuration writes Go durations as OpenAI's reset headers do", () => {
  assert.equal(formatDuration(0), "0s");
  assert.equal(formatDuration(-5), "0s");
  assert.equal(formatDuration(250), "250ms");
  assert.equal(formatDuration(1000), "1s");
  assert.equal(formatDuration(12_000), "12s");
  assert.equal(formatDuration(1500), "1.5s");
  assert.equal(formatDuration(12_345), "12.345s");
  assert.equal(formatDuration(60_000), "1m0s");
  assert.equal(formatDuration(360_000), "6m0s");
  assert.equal(formatDuration(3_723_000), "1h2m3s");
  assert.equal(formatDuration(86_400_000), "24h0m0s");
  assert.equal(formatDuration(3_600_500), "1h0m0.5s");
});

const w = (name: "minute" | "day", limit: number, remaining: number, resetAt: number) =>
  ({ name, limit, remaining, resetAt }) satisfies WindowState;

Deno.test("the headers show the window closest to running out; a tie goes to the sooner reset", () => {
  const minute = w("minute", 10, 9, 60_000);
  const day = w("day", 500, 499, 86_400_000);
  assert.equal(tightestWindow([minute, day]), minute);
  const dayTight = w("day", 500, 3, 86_400_000);
  assert.equal(tightestWindow([minute, dayTight]), dayTight);
  const dayTie = w("day", 500, 9, 86_400_000);
  assert.equal(tightestWindow([dayTie, minute]), minute);
});

Deno.test("a refusal reports the exhausted window that blocks longest", () => {
  const minute = w("minute", 10, 0, 60_000);
  const day = w("day", 500, 0, 86_400_000);
  assert.equal(blockingWindow([minute, day]), day);
  assert.equal(blockingWindow([minute, w("day", 500, 3, 86_400_000)]), minute);
  assert.equal(blockingWindow([w("minute", 10, 1, 60_000)]), null);
});

Deno.test("retry-after is whole seconds, rounded up, at least 1", () => {
  assert.equal(retryAfterSeconds(w("minute", 1, 0, 60_000), 0), 60);
  assert.equal(retryAfterSeconds(w("minute", 1, 0, 60_000), 48_001), 12);
  assert.equal(retryAfterSeconds(w("minute", 1, 0, 60_000), 59_999), 1);
});

Deno.test("a key's own limits override the configured key limits window by window", () => {
  const config = testConfig();
  const key = { limits: {} } as KeyRecord;
  assert.deepEqual(limitsFor(config.limits, "chat", null), { per_minute: 10, per_day: 500 });
  assert.deepEqual(limitsFor(config.limits, "other", null), { per_minute: null, per_day: 50_000 });
  assert.deepEqual(limitsFor(config.limits, "chat", key), { per_minute: 60, per_day: 10_000 });
  const own = { limits: { chat: { per_minute: 5 }, images: { per_day: null } } } as KeyRecord;
  assert.deepEqual(limitsFor(config.limits, "chat", own), { per_minute: 5, per_day: 10_000 });
  assert.deepEqual(limitsFor(config.limits, "images", own), { per_minute: 10, per_day: null });
  assert.equal(isUnlimited({ per_minute: null, per_day: null }), true);
  assert.equal(isUnlimited({ per_minute: null, per_day: 1 }), false);
});

Deno.test("a key's own token limits override the configured ones window by window", () => {
  const limits = testConfig((raw) => {
    raw.limits = { key: { chat: { tokens_per_minute: 1000, tokens_per_day: 9000 } } };
  }).limits;
  const record = (own: KeyRecord["limits"]) => ({ limits: own }) as KeyRecord;
  assert.deepEqual(tokenLimitOf(limitsFor(limits, "chat", record({}))), {
    per_minute: 1000,
    per_day: 9000,
  });
  assert.deepEqual(
    tokenLimitOf(limitsFor(limits, "chat", record({ chat: { tokens_per_minute: null } }))),
    { per_minute: null, per_day: 9000 },
  );
  assert.deepEqual(tokenLimitOf(limitsFor(limits, "chat", null)), {
    per_minute: null,
    per_day: null,
  });
});
