/** A service account's access tokens against the fake token endpoint (which verifies each
 * assertion's signature): one exchange for concurrent callers, a caller that leaves does not
 * fail the others, renewal after a refusal and before expiry, failures as 502s, retried (429,
 * 5xx, no connection) up to max_retries, a refusal not. */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { Logger } from "../../../src/log/logger.ts";
import { AccessTokens } from "../../../src/providers/vertex/access_tokens.ts";
import { readServiceAccount } from "../../../src/providers/vertex/service_account.ts";
import { makeServiceAccount, startFakeVertex } from "../../support/fake_vertex.ts";
import { CapturedOutput, FakeClock } from "../../support/server.ts";

async function setUp(tokenUrl?: string, maxRetries = 0) {
  const account = await makeServiceAccount();
  const vertex = startFakeVertex({ accounts: [account] });
  const clock = new FakeClock();
  const output = new CapturedOutput();
  const http = new FetchHttpClient();
  const tokens = new AccessTokens({
    provider: "vx",
    account: readServiceAccount("vx", "SA", account.json),
    tokenUrl: tokenUrl ?? vertex.tokenUrl,
    timeoutMs: 5_000,
    maxRetries,
    timing: { initialBackoffMs: 1, maxBackoffMs: 2 },
    http,
    clock,
    logger: new Logger({ clock, output }),
  });
  return {
    vertex,
    clock,
    output,
    tokens,
    signal: new AbortController().signal,
    async [Symbol.asyncDispose]() {
      http.close();
      await vertex.close();
    },
  };
}

Deno.test("access tokens: concurrent callers share one exchange, and the token is kept", async () => {
  await using t = await setUp();
  const all = await Promise.all(Array.from({ length: 5 }, () => t.tokens.headers(t.signal, null)));
  assert.equal(t.vertex.tokenRequests, 1);
  assert.ok(all.every((h) => h.authorization === all[0]!.authorization));
  assert.match(all[0]!.authorization!, /^Bearer ya29\.fake-access-token-1-/);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 1);
  assert.deepEqual(t.vertex.tokenViolations, []);
});

Deno.test("access tokens: a caller that leaves does not fail the others waiting", async () => {
  await using t = await setUp();
  const leaving = new AbortController();
  const left = t.tokens.headers(leaving.signal, null);
  const staying = t.tokens.headers(t.signal, null);
  leaving.abort(new Error("client gone"));
  await assert.rejects(left, /client gone/);
  assert.match((await staying).authorization!, /^Bearer /);
  assert.equal(t.vertex.tokenRequests, 1);
});

Deno.test("access tokens: a refused token is replaced once; an older refused one changes nothing", async () => {
  await using t = await setUp();
  const first = await t.tokens.headers(t.signal, null);
  const second = await t.tokens.headers(t.signal, first);
  assert.notEqual(second.authorization, first.authorization);
  assert.equal(t.vertex.tokenRequests, 2);
  // A call that was refused with the first token, finishing late: the second one stands.
  const third = await t.tokens.headers(t.signal, first);
  assert.equal(third.authorization, second.authorization);
  assert.equal(t.vertex.tokenRequests, 2);
});

Deno.test("access tokens: renewed 5 minutes before expiry, or at half the life of a short one", async () => {
  await using t = await setUp();
  await t.tokens.headers(t.signal, null);
  t.clock.advance(54 * 60_000);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 1);
  t.clock.advance(60_000);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 2);
  t.vertex.expiresIn = 120;
  t.clock.advance(56 * 60_000);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 3);
  t.clock.advance(59_000);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 3);
  t.clock.advance(2_000);
  await t.tokens.headers(t.signal, null);
  assert.equal(t.vertex.tokenRequests, 4);
});

Deno.test("access tokens: an unreachable endpoint or a failing one is a 502 naming the provider; the next call tries again", async () => {
  await using t = await setUp("http://127.0.0.1:9/token");
  const error = await t.tokens.headers(t.signal, null).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof ApiError);
  assert.equal(error.status, 502);
  assert.match(
    error.message,
    /"vx" could not authenticate: the token endpoint could not be reached/,
  );
  assert.match(t.output.err, /no access token: the token endpoint could not be reached/);
  await using u = await setUp();
  u.vertex.faults = [{ status: 503, errorType: "UNAVAILABLE" }];
  await assert.rejects(u.tokens.headers(u.signal, null), /the token endpoint failed \(HTTP 503\)/);
  assert.match((await u.tokens.headers(u.signal, null)).authorization!, /^Bearer /);
  assert.equal(u.vertex.received.filter((r) => r.path === "/token").length, 2);
});

Deno.test("access tokens: a throttled, failing or unreachable exchange is retried up to max_retries", async () => {
  await using t = await setUp(undefined, 3);
  t.vertex.faults = [
    { status: 429, errorType: "RESOURCE_EXHAUSTED" },
    { status: 500, errorType: "INTERNAL" },
    { status: 503, errorType: "UNAVAILABLE" },
  ];
  assert.match((await t.tokens.headers(t.signal, null)).authorization!, /^Bearer /);
  assert.equal(t.vertex.received.filter((r) => r.path === "/token").length, 4);
  assert.equal((t.output.err.match(/retrying in \d+ ms/g) ?? []).length, 3);
  assert.match(t.output.err, /retry 3 of 3/);
  await using u = await setUp("http://127.0.0.1:9/token", 2);
  await assert.rejects(u.tokens.headers(u.signal, null), /could not be reached/);
  assert.equal((u.output.err.match(/retrying in \d+ ms/g) ?? []).length, 2);
});

Deno.test("access tokens: a refused assertion (400 invalid_grant) is not retried", async () => {
  const stranger = await makeServiceAccount(undefined, "stranger");
  await using t = await setUp(undefined, 3);
  const tokens = new AccessTokens({
    provider: "vx",
    account: readServiceAccount("vx", "SA", stranger.json),
    tokenUrl: t.vertex.tokenUrl,
    timeoutMs: 5_000,
    maxRetries: 3,
    timing: { initialBackoffMs: 1, maxBackoffMs: 2 },
    http: new FetchHttpClient(),
    clock: t.clock,
    logger: new Logger({ clock: t.clock, output: t.output }),
  });
  await assert.rejects(tokens.headers(t.signal, null), /refused its service account \(HTTP 400/);
  assert.equal(t.vertex.received.filter((r) => r.path === "/token").length, 1);
});

Deno.test("access tokens: no retry waits past the exchange's deadline", async () => {
  await using t = await setUp(undefined, 3);
  // Asks for a minute; the deadline is 5 s: the failure is reported now, not waited out.
  t.vertex.faults = [{ status: 503, errorType: "UNAVAILABLE", headers: { "retry-after": "60" } }];
  await assert.rejects(t.tokens.headers(t.signal, null), /the token endpoint failed \(HTTP 503/);
  assert.equal(t.vertex.received.filter((r) => r.path === "/token").length, 1);
});
