import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { GroupCommit } from "../../src/limits/group_commit.ts";
import type { Grant, Ledger } from "../../src/limits/ledger.ts";
import { tokenKey, tokenLedger, type TokenSubject } from "../../src/limits/tokens.ts";
import { FakeClock } from "../support/server.ts";

const MINUTE = 60_000;
const SUBJECT: TokenSubject = { kind: "ip", id: "203.0.113.9" };
const LIMIT = [1000, 5000];
const KEY = tokenKey("chat", SUBJECT);

function ledgerOn(kv: Deno.Kv, clock: FakeClock) {
  return tokenLedger({ kv, clock, commits: new GroupCommit(kv) });
}

/** Reserves `tokens` `n` times at once; the grants (refusals as their ApiError). */
function reserveAll(ledger: Ledger, n: number, tokens: number) {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        ledger.reserve(KEY, LIMIT, tokens, "per IP address").catch((e: unknown) => {
          if (e instanceof ApiError) return e;
          throw e;
        }),
    ),
  );
}

const granted = (xs: (Grant | ApiError)[]) => xs.filter((x) => !(x instanceof ApiError)) as Grant[];

async function stored(kv: Deno.Kv): Promise<number[]> {
  return (await kv.get<number[]>(["tokens", "chat", "ip", SUBJECT.id])).value!;
}

Deno.test("ledger: 50 concurrent reservations of 100 against 1,000 a minute: exactly 10 pass", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const ledger = ledgerOn(kv, clock);
  const outcomes = await reserveAll(ledger, 50, 100);
  const grants = granted(outcomes);
  assert.equal(grants.length, 10);
  assert.deepEqual(grants.map((g) => g.window!.remaining).sort((a, b) => a - b), [
    0,
    100,
    200,
    300,
    400,
    500,
    600,
    700,
    800,
    900,
  ]);
  const refusal = outcomes.find((x) => x instanceof ApiError) as ApiError;
  assert.equal(refusal.status, 429);
  const headers = new Headers(refusal.headers);
  assert.equal(headers.get("x-ratelimit-limit-tokens"), "1000");
  assert.equal(headers.get("x-ratelimit-remaining-tokens"), "0");
  assert.equal(headers.get("retry-after"), "60");
  // Usage equal to the reservations: exactly the limit, no overshoot.
  await Promise.all(grants.map((g) => ledger.settle(g.reservation, 100)));
  assert.equal((await stored(kv))[1], 1000);
});

Deno.test("ledger: settling gives back what a request did not use, at once", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const ledger = ledgerOn(kv, clock);
  const grants = granted(await reserveAll(ledger, 10, 100));
  assert.equal(grants.length, 10);
  assert.equal(granted(await reserveAll(ledger, 1, 100)).length, 0);
  // Each used 40 of its 100: 600 come back, six more requests fit.
  await Promise.all(grants.map((g) => ledger.settle(g.reservation, 40)));
  assert.deepEqual((await stored(kv)).filter((_, i) => i % 2 === 1), [400, 400]);
  assert.equal(granted(await reserveAll(ledger, 8, 100)).length, 6);
});

Deno.test("ledger: two instances never hold more than the limit; a settle after the window ended leaves it", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const a = ledgerOn(kv, clock);
  const b = ledgerOn(kv, clock);
  const outcomes = (await Promise.all([reserveAll(a, 20, 70), reserveAll(b, 20, 70)])).flat();
  const grants = granted(outcomes);
  assert.equal(grants.length, 14); // 14 × 70 = 980 ≤ 1000 < 15 × 70
  assert.equal((await stored(kv))[1], 980);
  clock.advance(MINUTE);
  // The new minute starts from 0; settling the old minute's reservations changes only the day.
  await Promise.all(grants.map((g, i) => (i % 2 ? a : b).settle(g.reservation, 10)));
  const [, minute, , day] = await stored(kv);
  assert.equal(minute, 0);
  assert.equal(day, 140);
});

Deno.test("ledger: a request larger than the window's whole limit is told so", async () => {
  using kv = await Deno.openKv(":memory:");
  const ledger = ledgerOn(kv, new FakeClock());
  const [refusal] = await reserveAll(ledger, 1, 1001);
  assert.ok(refusal instanceof ApiError);
  assert.equal(refusal.status, 429);
  assert.match(refusal.message, /Request too large: it may use up to 1001 tokens/);
  assert.equal(new Headers(refusal.headers).get("retry-after"), null);
});
