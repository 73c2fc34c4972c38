import assert from "node:assert/strict";
import { ANONYMOUS_CALLER } from "../../src/auth/authenticate.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import { ApiError } from "../../src/errors.ts";
import { GroupCommit } from "../../src/limits/group_commit.ts";
import { RateLimiter } from "../../src/limits/limiter.ts";
import { countingKv } from "../support/counting_kv.ts";
import { FakeClock, testConfig } from "../support/server.ts";

const ips = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `198.51.${(from + i) >> 8}.${(from + i) & 255}`);

function limiterOn(kv: Deno.Kv, clock: FakeClock) {
  return new RateLimiter({
    kv,
    clock,
    limits: testConfig().limits,
    keys: new KeyStore(kv, clock),
  });
}

/** Admits one chat request from each IP at once; the statuses, in order. */
function admitAll(limiter: RateLimiter, from: string[]): Promise<number[]> {
  return Promise.all(
    from.map((ip) =>
      limiter.admit("chat", ANONYMOUS_CALLER, ip).then(
        () => 200,
        (e) => {
          if (e instanceof ApiError) return e.status;
          throw e;
        },
      )
    ),
  );
}

Deno.test("group commit: 1,000 clients arriving together cost 10 commits, not 1,000", async () => {
  using base = await Deno.openKv(":memory:");
  const { kv, counts } = countingKv(base);
  const limiter = limiterOn(kv, new FakeClock());
  const statuses = await admitAll(limiter, ips(1000));
  assert.ok(statuses.every((s) => s === 200));
  // One check per anonymous subject; Deno KV allows 100 checks per atomic operation. (Each new
  // subject reads its counter first, and reads finish over a few turns: a few more commits.)
  assert.ok(counts.commits >= 10 && counts.commits <= 15, `${counts.commits} commits`);
  // Each counter is stored, one request counted, with its own expiry.
  for (const ip of ["198.51.0.0", "198.51.3.231"]) {
    const entry = await base.get<number[]>(["ratelimit", "chat", "ip", ip]);
    assert.equal(entry.value![1], 1);
    assert.equal(entry.value![3], 1);
  }
  // The next round needs no reads (this process wrote every counter last), so all 1,000 are
  // decided in one turn: exactly 10 commits.
  counts.reads = 0;
  counts.commits = 0;
  assert.ok((await admitAll(limiter, ips(1000))).every((s) => s === 200));
  assert.equal(counts.reads, 0);
  assert.equal(counts.commits, 10);
});

Deno.test("group commit: a failed commit splits off only the subjects another instance changed", async () => {
  using base = await Deno.openKv(":memory:");
  const { kv, counts } = countingKv(base);
  const clock = new FakeClock();
  const a = limiterOn(kv, clock);
  const b = limiterOn(kv, clock);
  const subjects = ips(50);
  await admitAll(a, subjects);
  // The other instance counts one request of two subjects, so `a`'s copies of those two are
  // stale; the other 48 are current.
  await admitAll(b, [subjects[7]!, subjects[30]!]);
  counts.commits = 0;
  counts.reads = 0;
  const statuses = await admitAll(a, subjects);
  assert.ok(statuses.every((s) => s === 200));
  // The failed commit of all 50; the 48 unchanged at once; the 2 deciding again on what the
  // group commit read (with the 48, or in a commit of their own).
  assert.ok(counts.commits === 2 || counts.commits === 3, `${counts.commits} commits`);
  // One getMany of 10 keys per 10 subjects to find the changed ones; the 2 read nothing more.
  assert.equal(counts.reads, 5);
  for (const [i, ip] of subjects.entries()) {
    const entry = await base.get<number[]>(["ratelimit", "chat", "ip", ip]);
    assert.equal(entry.value![1], i === 7 || i === 30 ? 3 : 2, ip);
  }
});

Deno.test("group commit: exact at the limit when instances race on the same subjects", async () => {
  using base = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const a = limiterOn(base, clock);
  const b = limiterOn(base, clock);
  const subjects = ips(120);
  // 15 requests per subject (limit 10 a minute), split between the instances, all at once.
  const all = await Promise.all(
    Array.from({ length: 15 }, (_, round) => admitAll(round % 2 === 0 ? a : b, subjects)),
  );
  for (const [i, ip] of subjects.entries()) {
    const admitted = all.filter((statuses) => statuses[i] === 200).length;
    assert.equal(admitted, 10, ip);
    const refused = all.filter((statuses) => statuses[i] === 429).length;
    assert.equal(refused, 5, ip);
  }
});

Deno.test("group commit: writes beyond one operation's 100 checks go in the next one", async () => {
  using base = await Deno.openKv(":memory:");
  const { kv, counts } = countingKv(base);
  const commits = new GroupCommit(kv);
  const outcomes = await Promise.all(
    Array.from({ length: 250 }, (_, i) =>
      commits.submit({
        checks: [{ key: ["n", i], versionstamp: null }],
        key: ["n", i],
        value: i,
        expireIn: 60_000,
      })),
  );
  assert.ok(outcomes.every((o) => o.kind === "committed"));
  assert.equal(new Set(outcomes.map((o) => o.kind === "committed" && o.versionstamp)).size, 3);
  assert.equal(counts.commits, 3);
  // A write whose check fails alone is a conflict, and nothing else is held back.
  const [stale, fresh] = await Promise.all([
    commits.submit({
      checks: [{ key: ["n", 1], versionstamp: null }],
      key: ["n", 1],
      value: 0,
      expireIn: 60_000,
    }),
    commits.submit({
      checks: [{ key: ["m"], versionstamp: null }],
      key: ["m"],
      value: 0,
      expireIn: 60_000,
    }),
  ]);
  assert.equal(stale.kind, "conflict");
  assert.equal(fresh.kind, "committed");
  assert.equal((await base.get(["n", 1])).value, 1);
});

Deno.test("group commit: two processes, 1,000 clients, 12 requests each: exactly 10 admitted per client", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const start = `${dir}/go`;
    const script = new URL("../support/limiter_process.ts", import.meta.url).pathname;
    const processes = [0, 1].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", script, `${dir}/kv.sqlite`, start, "1000", "6"],
        stdout: "piped",
        stderr: "piped",
      }).output()
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Deno.writeTextFile(start, "");
    const outputs = await Promise.all(processes);
    const counts = outputs.map((o) => {
      assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
      return JSON.parse(new TextDecoder().decode(o.stdout)) as number[];
    });
    const totals = counts[0]!.map((n, i) => n + counts[1]![i]!);
    assert.deepEqual(new Set(totals), new Set([10]));
    // Both processes got some of every subject's admissions somewhere: they really raced.
    assert.ok(counts.every((c) => c.some((n) => n > 0)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit: a write submitted at once is committed alone, in the same turn; others wait for the turn", async () => {
  using base = await Deno.openKv(":memory:");
  const { kv, counts } = countingKv(base);
  const commits = new GroupCommit(kv);
  const write = (n: number) => ({ checks: [], key: ["w", n], value: n, expireIn: 60_000 });
  const first = commits.submit(write(1), true);
  assert.equal(counts.commits, 1, "its commit started before submit returned");
  const second = commits.submit(write(2));
  const third = commits.submit(write(3));
  assert.equal(counts.commits, 1, "the others wait for it");
  for (const outcome of await Promise.all([first, second, third])) {
    assert.equal(outcome.kind, "committed");
  }
  assert.equal(counts.commits, 2, "and went together in one commit");
  // Without `atOnce`, writes of one turn share a commit.
  await Promise.all([commits.submit(write(4)), commits.submit(write(5))]);
  assert.equal(counts.commits, 3);
  // `atOnce` while a commit is due joins it.
  const due = commits.submit(write(6));
  const joining = commits.submit(write(7), true);
  await Promise.all([due, joining]);
  assert.equal(counts.commits, 4);
});
