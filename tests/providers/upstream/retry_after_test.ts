import assert from "node:assert/strict";
import {
  rateLimitResetMs,
  rateLimitRetryAfter,
  retryAfterMs,
  wholeSeconds,
} from "../../../src/providers/upstream/retry_after.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const reset = (init: Record<string, string>) => rateLimitResetMs(new Headers(init), NOW);

Deno.test("rateLimitResetMs reads OpenAI's durations, plain seconds, Unix times and dates", () => {
  const openai = (value: string) => reset({ "x-ratelimit-reset-requests": value });
  assert.equal(openai("1s"), 1000);
  assert.equal(openai("6m0s"), 360_000);
  assert.equal(openai("20ms"), 20);
  assert.equal(openai("1h2m3.5s"), 3_723_500);
  assert.equal(openai("1m30.951s"), 90_951);
  assert.equal(openai("12"), 12_000);
  assert.equal(openai(String((NOW + 9000) / 1000)), 9000);
  assert.equal(openai(String(NOW + 4000)), 4000);
  assert.equal(openai(new Date(NOW + 2000).toISOString()), 2000);
  assert.equal(openai(new Date(NOW - 2000).toISOString()), 0);
  for (const nonsense of ["", "soon", "-3s"]) assert.equal(openai(nonsense), null, nonsense);
  assert.equal(reset({}), null);
});

Deno.test("rateLimitResetMs: the window that ran out, else the latest of all", () => {
  assert.equal(
    reset({
      "anthropic-ratelimit-input-tokens-remaining": "0",
      "anthropic-ratelimit-input-tokens-reset": new Date(NOW + 3000).toISOString(),
      "anthropic-ratelimit-output-tokens-remaining": "0",
      "anthropic-ratelimit-output-tokens-reset": new Date(NOW + 5000).toISOString(),
      "anthropic-ratelimit-requests-remaining": "40",
      "anthropic-ratelimit-requests-reset": new Date(NOW + 60_000).toISOString(),
    }),
    5000,
  );
  assert.equal(
    reset({
      "x-ratelimit-remaining-requests": "3",
      "x-ratelimit-reset-requests": "2s",
      "x-ratelimit-remaining-tokens": "100",
      "x-ratelimit-reset-tokens": "45s",
    }),
    45_000,
  );
});

Deno.test("rateLimitRetryAfter: retry-after-ms, retry-after, the resets, else 1, in whole seconds", () => {
  const after = (init: Record<string, string>) => rateLimitRetryAfter(new Headers(init), NOW);
  assert.equal(after({ "retry-after-ms": "2500", "x-ratelimit-reset-requests": "9s" }), "3");
  assert.equal(after({ "retry-after": "0" }), "1");
  assert.equal(after({ "x-ratelimit-reset-tokens": "9.1s" }), "10");
  assert.equal(after({}), "1");
  assert.equal(wholeSeconds(0), "1");
  assert.equal(wholeSeconds(1001), "2");
});

Deno.test("retryAfterMs reads retry-after-ms, seconds and HTTP dates; ignores nonsense", () => {
  const h = (init: Record<string, string>) => retryAfterMs(new Headers(init), NOW);
  assert.equal(h({ "retry-after-ms": "250", "retry-after": "9" }), 250);
  assert.equal(h({ "retry-after": "2" }), 2000);
  assert.equal(h({ "retry-after": "0.5" }), 500);
  assert.equal(h({ "retry-after": new Date(NOW + 4000).toUTCString() }), 4000);
  assert.equal(h({ "retry-after": new Date(NOW - 4000).toUTCString() }), 0);
  assert.equal(h({ "retry-after": "soon" }), null);
  assert.equal(h({ "retry-after": "-3" }), null);
  assert.equal(h({}), null);
});
