import assert from "node:assert/strict";
import { ANONYMOUS_CALLER, authenticate, type Caller } from "../../src/auth/authenticate.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import type { Config, LimitScope } from "../../src/config/types.ts";
import { ApiError } from "../../src/errors.ts";
import { GroupCommit } from "../../src/limits/group_commit.ts";
import { type Admission, RateLimiter } from "../../src/limits/limiter.ts";
import { countingKv } from "../support/counting_kv.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock, testConfig } from "../support/server.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;

/** One "process": its own limiter and key store (in-process state) over a shared KV. */
function instance(kv: Deno.Kv, clock: FakeClock, config: Config) {
  const keys = new KeyStore(kv, clock);
  const limiter = new RateLimiter({ kv, clock, limits: config.limits, keys });
  return { keys, limiter };
}

async function setup(patch?: (raw: Record<string, unknown>) => void) {
  const base = await Deno.openKv(":memory:");
  const { kv, counts } = countingKv(base);
  const clock = new FakeClock(Date.UTC(2026, 0, 15, 12, 0, 0));
  const config = testConfig(patch);
  return {
    kv,
    counts,
    clock,
    config,
    ...instance(kv, clock, config),
    other: instance(kv, clock, config),
    [Symbol.dispose]: () => base.close(),
  };
}

type Outcome =
  | { ok: true; status: 200; admission: Admission }
  | { ok: false; status: number; error: ApiError };

/** The admission of an admitted request (fails the test otherwise). */
function admission(o: Outcome): Admission {
  if (!o.ok) throw new Error(`refused: ${o.status} ${o.error.message}`);
  return o.admission;
}

/** The error of a refused request (fails the test otherwise). */
function refusal(o: Outcome): ApiError {
  if (o.ok) throw new Error("admitted");
  return o.error;
}

async function attempt(
  limiter: RateLimiter,
  scope: LimitScope,
  caller: Caller = ANONYMOUS_CALLER,
  ip = "203.0.113.7",
): Promise<Outcome> {
  try {
    return { ok: true, status: 200, admission: await limiter.admit(scope, caller, ip) };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, status: e.status, error: e };
    throw e;
  }
}

function bearer(key: string): Request {
  return new Request("http://x/", { headers: { authorization: `Bearer ${key}` } });
}

function admitted(outcomes: Outcome[]): number {
  return outcomes.filter((o) => o.status === 200).length;
}

Deno.test("50 concurrent anonymous chat requests: exactly 10 admitted, remaining 9..0, in 1 commit", async () => {
  using t = await setup();
  const outcomes = await Promise.all(
    Array.from({ length: 50 }, () => attempt(t.limiter, "chat")),
  );
  assert.equal(admitted(outcomes), 10);
  const remaining = outcomes.flatMap((o) => o.ok ? [o.admission.window!] : [])
    .map((w) => {
      assert.equal(w.limit, 10);
      assert.equal(w.name, "minute");
      return w.remaining;
    }).sort((a, b) => a - b);
  assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (const o of outcomes) {
    if (o.ok) continue;
    assert.equal(o.status, 429);
    assert.equal(o.error.type, "rate_limit_error");
    assert.equal(o.error.code, "rate_limit_exceeded");
    const headers = new Headers(o.error.headers);
    assert.equal(headers.get("retry-after"), "60");
    assert.equal(headers.get("x-ratelimit-limit-requests"), "10");
    assert.equal(headers.get("x-ratelimit-remaining-requests"), "0");
    assert.equal(headers.get("x-ratelimit-reset-requests"), "1m0s");
  }
  // The group yields to the event loop once before settling, so all 50 (made in one turn)
  // are settled together: a subject new to the process is taken to have no counter (no read),
  // and one commit, checking that, grants 10 and refuses 40.
  assert.equal(t.counts.commits, 1);
  assert.equal(t.counts.reads, 0);
});

Deno.test("a subject new to this process but counted by another is decided on the entry read after the failed commit", async () => {
  using t = await setup();
  for (let i = 0; i < 9; i++) assert.equal((await attempt(t.other.limiter, "chat")).status, 200);
  t.counts.commits = 0;
  t.counts.reads = 0;
  // This instance has never seen the subject: it takes the counter to be absent, its commit's
  // check fails, and the group commit's read of the counter (9 of 10) decides the batch.
  const outcomes = await Promise.all(Array.from({ length: 3 }, () => attempt(t.limiter, "chat")));
  assert.equal(admitted(outcomes), 1);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), [200, 429, 429]);
  assert.equal(t.counts.commits, 2);
  assert.equal(t.counts.reads, 1);
  const stored = await t.kv.get<number[]>(["ratelimit", "chat", "ip", "203.0.113.7"]);
  assert.equal(stored.value![1], 10);
});

Deno.test("two instances on one KV never over-admit, sequentially or concurrently", async () => {
  using t = await setup();
  // Alternating: the 11th is refused whichever instance gets it.
  for (let i = 0; i < 10; i++) {
    const limiter = i % 2 === 0 ? t.limiter : t.other.limiter;
    assert.equal((await attempt(limiter, "chat")).status, 200, `request ${i + 1}`);
  }
  assert.equal((await attempt(t.limiter, "chat")).status, 429);
  assert.equal((await attempt(t.other.limiter, "chat")).status, 429);
  // Concurrently, over several minutes: exactly 10 per minute in total.
  for (let minute = 1; minute <= 5; minute++) {
    t.clock.advance(MINUTE);
    const outcomes = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) => attempt(i % 2 === 0 ? t.limiter : t.other.limiter, "chat"),
      ),
    );
    assert.equal(admitted(outcomes), 10, `minute ${minute}`);
  }
});

Deno.test("minute and day windows roll over at their boundaries (the clock is injected)", async () => {
  using t = await setup();
  // 12:00:30: the minute window resets at 12:01:00.
  t.clock.advance(30_000);
  for (let i = 0; i < 10; i++) assert.equal((await attempt(t.limiter, "chat")).status, 200);
  const refused = await attempt(t.limiter, "chat");
  assert.equal(refused.status, 429);
  assert.equal(new Headers(refusal(refused).headers).get("retry-after"), "30");
  assert.equal(new Headers(refusal(refused).headers).get("x-ratelimit-reset-requests"), "30s");
  t.clock.advance(29_999);
  assert.equal((await attempt(t.limiter, "chat")).status, 429);
  t.clock.advance(1);
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  // The rest of the 500 a day, 10 a minute.
  let sent = 11;
  while (sent < 500) {
    const ok = await attempt(t.limiter, "chat");
    if (ok.status === 429) {
      t.clock.advance(MINUTE);
      continue;
    }
    sent++;
  }
  t.clock.advance(MINUTE);
  const dayOver = await attempt(t.limiter, "chat");
  assert.equal(dayOver.status, 429);
  const headers = new Headers(refusal(dayOver).headers);
  assert.equal(headers.get("x-ratelimit-limit-requests"), "500");
  assert.equal(headers.get("x-ratelimit-remaining-requests"), "0");
  const untilMidnight = Date.UTC(2026, 0, 16) - t.clock.now();
  assert.equal(headers.get("retry-after"), String(Math.ceil(untilMidnight / 1000)));
  // Midnight UTC: a new day.
  t.clock.ms = Date.UTC(2026, 0, 16, 0, 0, 0);
  const next = admission(await attempt(t.limiter, "chat"));
  assert.deepEqual(next.window, {
    name: "minute",
    limit: 10,
    remaining: 9,
    resetAt: Date.UTC(2026, 0, 16, 0, 1, 0),
  });
});

Deno.test("other endpoints: exactly 50,000 a day per IP", async () => {
  using t = await setup();
  const outcomes = await Promise.all(
    Array.from({ length: 50_001 }, () => attempt(t.limiter, "other")),
  );
  assert.equal(admitted(outcomes), 50_000);
  assert.ok(t.counts.commits <= 3, `commits: ${t.counts.commits}`);
  const first = admission(outcomes[0]!);
  assert.equal(first.window!.limit, 50_000);
  assert.equal(first.window!.name, "day");
});

Deno.test("IPs and scopes are counted separately; images have their own limits", async () => {
  using t = await setup();
  for (let i = 0; i < 10; i++) await attempt(t.limiter, "chat", ANONYMOUS_CALLER, "198.51.100.1");
  assert.equal((await attempt(t.limiter, "chat", ANONYMOUS_CALLER, "198.51.100.1")).status, 429);
  assert.equal((await attempt(t.limiter, "chat", ANONYMOUS_CALLER, "198.51.100.2")).status, 200);
  assert.equal((await attempt(t.limiter, "other", ANONYMOUS_CALLER, "198.51.100.1")).status, 200);
  assert.equal((await attempt(t.limiter, "images", ANONYMOUS_CALLER, "198.51.100.1")).status, 200);
  assert.equal((await attempt(t.limiter, "images", ANONYMOUS_CALLER, "198.51.100.1")).status, 200);
  const third = await attempt(t.limiter, "images", ANONYMOUS_CALLER, "198.51.100.1");
  assert.equal(third.status, 429);
  assert.match(refusal(third).message, /image generations: 2 per minute/);
});

Deno.test("a client over its limit is answered from memory: no KV write, no KV read", async () => {
  using t = await setup();
  for (let i = 0; i < 11; i++) await attempt(t.limiter, "chat");
  const before = { ...t.counts };
  const outcomes = await Promise.all(
    Array.from({ length: 200 }, () => attempt(t.limiter, "chat")),
  );
  assert.equal(admitted(outcomes), 0);
  assert.deepEqual(t.counts, before);
  // When the window ends the note is dropped and KV decides again.
  t.clock.advance(MINUTE);
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  assert.equal(t.counts.commits, before.commits + 1);
});

Deno.test("an instance that wrote the counter last needs no read: one commit per request", async () => {
  using t = await setup();
  const { key } = await t.keys.create({ name: "k" });
  await attempt(t.limiter, "chat");
  const caller = await authenticate(bearer(key), t.keys);
  await attempt(t.limiter, "chat", caller);
  const before = { ...t.counts };
  for (let i = 0; i < 5; i++) {
    assert.equal((await attempt(t.limiter, "chat")).status, 200);
    // Keyed: the key record comes from this process's copy and is proven current by a
    // versionstamp check inside the same commit.
    const keyed = await authenticate(bearer(key), t.keys);
    assert.equal(keyed.kind === "key" && keyed.verified, false);
    assert.equal((await attempt(t.limiter, "chat", keyed)).status, 200);
  }
  assert.equal(t.counts.reads - before.reads, 0);
  assert.equal(t.counts.commits - before.commits, 10);
});

Deno.test("keys: configured key limits, per-key overrides, null for unlimited", async () => {
  using t = await setup();
  const plain = await t.keys.create({ name: "plain" });
  const tight = await t.keys.create({
    name: "tight",
    limits: { chat: { per_minute: 3 }, other: { per_day: null } },
  });
  const plainCaller = await authenticate(bearer(plain.key), t.keys);
  const first = admission(await attempt(t.limiter, "chat", plainCaller));
  assert.equal(first.window!.limit, 60);
  assert.equal(first.principal.kind, "key");
  const tightCaller = await authenticate(bearer(tight.key), t.keys);
  for (let i = 0; i < 3; i++) {
    assert.equal((await attempt(t.limiter, "chat", tightCaller)).status, 200);
  }
  const refused = await attempt(t.limiter, "chat", tightCaller);
  assert.equal(refused.status, 429);
  assert.match(refusal(refused).message, /3 per minute for this API key/);
  // The same IP anonymously is a different subject.
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  // `other` per_day null and per_minute null (configured): unlimited, no headers, no write.
  const before = t.counts.commits;
  const unlimited = admission(await attempt(t.limiter, "other", tightCaller));
  assert.equal(unlimited.window, null);
  assert.equal(t.counts.commits, before);
});

Deno.test("a key revoked or disabled through another instance is refused on its next request", async () => {
  using t = await setup();
  const a = await t.keys.create({ name: "a" });
  const b = await t.keys.create({ name: "b" });
  // The other instance learns both keys and serves them from its own copy.
  for (const { key } of [a, b]) {
    const caller = await authenticate(bearer(key), t.other.keys);
    assert.equal((await attempt(t.other.limiter, "chat", caller)).status, 200);
    assert.equal((await attempt(t.other.limiter, "other", caller)).status, 200);
  }
  const cachedA = await authenticate(bearer(a.key), t.other.keys);
  const cachedB = await authenticate(bearer(b.key), t.other.keys);
  assert.equal(cachedA.kind === "key" && cachedA.verified, false);
  await t.keys.revoke(a.record.id);
  await t.keys.update(b.record.id, { disabled: true });
  for (const scope of ["chat", "other"] as const) {
    const revoked = await attempt(t.other.limiter, scope, cachedA);
    assert.equal(revoked.status, 401);
    const disabled = await attempt(t.other.limiter, scope, cachedB);
    assert.equal(disabled.status, 401);
    assert.match(refusal(disabled).message, /disabled/);
  }
  // And authentication no longer finds them.
  await assert.rejects(authenticate(bearer(a.key), t.other.keys), /Incorrect API key/);
  await assert.rejects(authenticate(bearer(b.key), t.other.keys), /disabled/);
});

Deno.test("a blocked key is still checked: revoked → 401, limit raised → admitted at once", async () => {
  using t = await setup();
  const k = await t.keys.create({ name: "k", limits: { chat: { per_minute: 1 } } });
  const caller = await authenticate(bearer(k.key), t.other.keys);
  assert.equal((await attempt(t.other.limiter, "chat", caller)).status, 200);
  const cached = await authenticate(bearer(k.key), t.other.keys);
  assert.equal((await attempt(t.other.limiter, "chat", cached)).status, 429);
  const writes = t.counts.commits;
  assert.equal((await attempt(t.other.limiter, "chat", cached)).status, 429);
  assert.equal(t.counts.commits, writes, "a refused keyed request writes nothing");
  await t.keys.update(k.record.id, { limits: { chat: { per_minute: 5 } } });
  const again = await authenticate(bearer(k.key), t.other.keys);
  const raised = admission(await attempt(t.other.limiter, "chat", again));
  assert.equal(raised.window!.limit, 5);
  assert.equal(raised.window!.remaining, 3);
  for (let i = 0; i < 3; i++) await attempt(t.other.limiter, "chat", again);
  assert.equal((await attempt(t.other.limiter, "chat", again)).status, 429);
  await t.keys.revoke(k.record.id);
  assert.equal((await attempt(t.other.limiter, "chat", again)).status, 401);
});

Deno.test("unlimited scopes give no headers and cost no KV write", async () => {
  using t = await setup((raw) => {
    raw.limits = { anonymous: { other: { per_minute: null, per_day: null } } };
  });
  const outcome = admission(await attempt(t.limiter, "other"));
  assert.equal(outcome.window, null);
  assert.equal(t.counts.commits, 0);
  assert.equal(t.counts.reads, 0);
});

Deno.test("a key's last use is recorded off the request path, at most once a minute", async () => {
  using t = await setup();
  const k = await t.keys.create({ name: "k" });
  assert.equal((await t.keys.get(k.record.id))!.last_used, null);
  const caller = await authenticate(bearer(k.key), t.keys);
  const lastUsed = (at: number) =>
    eventually(
      async () => (await t.keys.get(k.record.id))!.last_used === at || undefined,
      `last_used = ${at}`,
    );
  const start = t.clock.now();
  // An admitted keyed request commits its counter, and (first time this minute) last_used.
  let before = t.counts.commits;
  await attempt(t.limiter, "other", caller);
  assert.equal(t.counts.commits - before, 2);
  await lastUsed(start);
  t.clock.advance(30_000);
  before = t.counts.commits;
  await attempt(t.limiter, "other", caller);
  assert.equal(t.counts.commits - before, 1, "last_used written twice within a minute");
  t.clock.advance(30_000);
  await attempt(t.limiter, "other", caller);
  await lastUsed(start + MINUTE);
  // Recording a use does not change the record's versionstamp, so other instances' copies
  // stay valid.
  const entry = await t.other.keys.lookup(k.record.hash);
  t.clock.advance(DAY);
  await attempt(t.limiter, "other", caller);
  await lastUsed(start + MINUTE + DAY);
  assert.equal((await t.other.keys.lookup(k.record.hash))!.versionstamp, entry!.versionstamp);
});

Deno.test("a commit that meets another process's lock is tried again, still exactly", async () => {
  using base = await Deno.openKv(":memory:");
  let failures = 0;
  const kv = new Proxy(base, {
    get(target, prop) {
      if (prop !== "atomic") return Reflect.get(target, prop, target)?.bind?.(target);
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = () => {
          // Every other commit finds the file locked, as under `deno serve --parallel`.
          if (failures++ % 2 === 0) return Promise.reject(new TypeError("database is locked"));
          return commit();
        };
        return op;
      };
    },
  });
  const clock = new FakeClock();
  const limiter = new RateLimiter({
    kv,
    clock,
    limits: testConfig().limits,
    keys: new KeyStore(kv, clock),
  });
  const outcomes = await Promise.all(Array.from({ length: 30 }, () => attempt(limiter, "chat")));
  assert.equal(admitted(outcomes), 10);
  assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set([200, 429]));
  assert.ok(failures >= 2);
});

Deno.test("an anonymous IPv6 client counts by its /64: new addresses in it get no new limit", async () => {
  using t = await setup();
  const outcomes = await Promise.all(
    Array.from(
      { length: 12 },
      (_, i) =>
        attempt(t.limiter, "chat", ANONYMOUS_CALLER, `2001:db8:5:6::${(i + 1).toString(16)}`),
    ),
  );
  assert.equal(admitted(outcomes), 10);
  // The next /64 has its own.
  assert.equal((await attempt(t.limiter, "chat", ANONYMOUS_CALLER, "2001:db8:5:7::1")).status, 200);
  // The prefix is the config's: with /128 every address counts alone.
  const config = testConfig((raw) => {
    raw.server = { ...(raw.server as object), ipv6_prefix: 128 };
  });
  const single = new RateLimiter({
    kv: t.kv,
    clock: t.clock,
    limits: config.limits,
    keys: t.keys,
    ipv6Prefix: config.server.ipv6_prefix,
  });
  assert.equal((await attempt(single, "chat", ANONYMOUS_CALLER, "2001:db8:5:6::99")).status, 200);
});

Deno.test("likely: only a subject this process counted, far below every limit, is likely admitted", async () => {
  using t = await setup();
  const likely = (limiter: RateLimiter, caller: Caller = ANONYMOUS_CALLER) =>
    limiter.likely("chat", caller, "203.0.113.7");
  assert.equal(likely(t.limiter), null, "a subject this process has not counted");
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  assert.deepEqual(likely(t.limiter), { kind: "anonymous" });
  assert.equal(likely(t.other.limiter), null, "the other process holds no count of it");
  // 10 a minute: likely while 2 are left besides the request (a tenth of 10, at least 2).
  for (let i = 2; i <= 7; i++) assert.equal((await attempt(t.limiter, "chat")).status, 200);
  assert.deepEqual(likely(t.limiter), { kind: "anonymous" }, "7 counted, 3 left");
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  assert.equal(likely(t.limiter), null, "8 counted: the 9th would leave 1");
  // A block is never likely; a new window with a known count is.
  for (let i = 9; i <= 11; i++) await attempt(t.limiter, "chat");
  assert.equal(likely(t.limiter), null);
  t.clock.advance(MINUTE);
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  assert.deepEqual(likely(t.limiter), { kind: "anonymous" });
  // Other processes taking the margin make the likely request a refusal, which admit decides.
  for (let i = 0; i < 9; i++) assert.equal((await attempt(t.other.limiter, "chat")).status, 200);
  assert.deepEqual(likely(t.limiter), { kind: "anonymous" }, "its copy is stale");
  assert.equal((await attempt(t.limiter, "chat")).status, 429);
  assert.equal(likely(t.limiter), null);
});

Deno.test("likely: a key caller is likely only with the record its count was committed with", async () => {
  using t = await setup();
  const { key, record } = await t.keys.create({ name: "a" });
  const caller = await authenticate(bearer(key), t.keys);
  assert.equal(t.limiter.likely("chat", caller, "203.0.113.7"), null);
  assert.equal((await attempt(t.limiter, "chat", caller)).status, 200);
  const cached = await authenticate(bearer(key), t.keys);
  const principal = t.limiter.likely("chat", cached, "203.0.113.7");
  assert.equal(principal?.kind === "key" && principal.key.id, record.id);
  // Changed through the other instance: this one's cached caller still brings the old record,
  // which is likely by its copy, and admit then decides on the new one.
  await t.other.keys.update(record.id, { name: "renamed" });
  const decided = admission(await attempt(t.limiter, "chat", cached));
  assert.equal(decided.principal.kind === "key" && decided.principal.key.name, "renamed");
  const stale = { ...cached, entry: { ...(cached as { entry: object }).entry, versionstamp: "0" } };
  assert.equal(t.limiter.likely("chat", stale as Caller, "203.0.113.7"), null);
});

Deno.test("likely: not while a batch is decided or a commit is under way (under load a request waits for those anyway)", async () => {
  using t = await setup();
  const commits = new GroupCommit(t.kv);
  const limiter = new RateLimiter({
    kv: t.kv,
    clock: t.clock,
    limits: t.config.limits,
    keys: t.keys,
    commits,
  });
  assert.equal((await attempt(limiter, "chat")).status, 200);
  assert.deepEqual(limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), { kind: "anonymous" });
  const deciding = attempt(limiter, "chat", ANONYMOUS_CALLER, "198.51.100.1");
  assert.equal(limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), null, "a batch is decided");
  assert.equal((await deciding).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), { kind: "anonymous" });
  const write = commits.submit({ checks: [], key: ["elsewhere"], value: 1, expireIn: MINUTE });
  assert.equal(limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), null);
  assert.equal((await write).kind, "committed");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), { kind: "anonymous" });
});

Deno.test("likely: a likely request's commit starts at once (its work runs during the commit's I/O)", async () => {
  using t = await setup();
  assert.equal((await attempt(t.limiter, "chat")).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.notEqual(t.limiter.likely("chat", ANONYMOUS_CALLER, "203.0.113.7"), null);
  const before = t.counts.commits;
  const admitted = t.limiter.admit("chat", ANONYMOUS_CALLER, "203.0.113.7", true);
  assert.equal(t.counts.commits, before + 1, "committed before admit returned");
  assert.equal((await admitted).window?.remaining, 8);
  // Without it, the commit waits for the turn in which others may join.
  const waiting = t.limiter.admit("chat", ANONYMOUS_CALLER, "203.0.113.7");
  assert.equal(t.counts.commits, before + 1);
  assert.equal((await waiting).window?.remaining, 7);
});
