import assert from "node:assert/strict";
import { isRetryableStatus, RetryPolicy } from "../../../src/providers/upstream/retry.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

Deno.test("isRetryableStatus: what the official SDKs retry, 408, 409, 429 and 5xx (529 included)", () => {
  assert.deepEqual(
    [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529].filter(
      isRetryableStatus,
    ),
    [408, 409, 429, 500, 502, 503, 504, 529],
  );
});

Deno.test("RetryPolicy: the upstream's retry-after, else a doubling backoff, within max_retries and the deadline", () => {
  const policy = new RetryPolicy(3, { initialBackoffMs: 100, maxBackoffMs: 300, random: () => 0 });
  assert.equal(policy.wait(0, null, NOW, 10_000), 100);
  assert.equal(policy.wait(1, null, NOW, 10_000), 200);
  assert.equal(policy.wait(2, null, NOW, 10_000), 300, "capped at maxBackoffMs");
  assert.equal(policy.wait(3, null, NOW, 10_000), null, "no retry left");
  assert.equal(policy.wait(0, new Headers({ "retry-after": "2" }), NOW, 10_000), 2000);
  assert.equal(policy.wait(0, new Headers(), NOW, 10_000), 100, "no retry-after: the backoff");
  assert.equal(
    policy.wait(0, new Headers({ "retry-after": "20" }), NOW, 10_000),
    null,
    "a wait past the deadline is no retry",
  );
  const jittered = new RetryPolicy(1, { initialBackoffMs: 100, random: () => 0.5 });
  assert.equal(jittered.wait(0, null, NOW, 10_000), 87.5, "up to a quarter off");
});
