import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { GroupCommit } from "../../src/limits/group_commit.ts";
import { ConcurrencyLeases, type Lease } from "../../src/limits/leases.ts";
import { systemClock } from "../../src/clock.ts";
import { FakeClock } from "../support/server.ts";

function leasesOn(kv: Deno.Kv, clock: FakeClock) {
  return new ConcurrencyLeases({ kv, clock, commits: new GroupCommit(kv), ttlMs: 60_000 });
}

function acquireAll(leases: ConcurrencyLeases, n: number, max: number) {
  return Promise.all(
    Array.from({ length: n }, () =>
      leases.acquire("key_a", max).catch((e: unknown) => {
        if (e instanceof ApiError) return e;
        throw e;
      })),
  );
}

const held = (xs: (Lease | ApiError)[]) => xs.filter((x) => !(x instanceof ApiError)) as Lease[];

Deno.test("leases: of 10 requests at once with max_concurrent 3, across two instances, 3 run", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const a = leasesOn(kv, clock);
  const b = leasesOn(kv, clock);
  const outcomes = (await Promise.all([acquireAll(a, 5, 3), acquireAll(b, 5, 3)])).flat();
  const granted = held(outcomes);
  assert.equal(granted.length, 3);
  const refusal = outcomes.find((x) => x instanceof ApiError) as ApiError;
  assert.equal(refusal.status, 429);
  assert.match(refusal.message, /may run 3 at once/);
  // A slot given back is free at once, in the other instance too.
  await a.release(granted[0]!);
  assert.equal(held(await acquireAll(b, 2, 3)).length, 1);
  a.close();
  b.close();
});

Deno.test("leases: a process that dies holding slots gives them back when the leases expire", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const dead = leasesOn(kv, clock);
  assert.equal(held(await acquireAll(dead, 2, 2)).length, 2);
  dead.close(); // It stops renewing, as a killed process would.
  const alive = leasesOn(kv, clock);
  assert.equal(held(await acquireAll(alive, 1, 2)).length, 0);
  clock.advance(59_000);
  assert.equal(held(await acquireAll(alive, 1, 2)).length, 0);
  clock.advance(2_000);
  const mine = held(await acquireAll(alive, 3, 2));
  assert.equal(mine.length, 2);
  // A live process's leases do not expire: renewal moves them on.
  clock.advance(40_000);
  await alive.renew();
  clock.advance(40_000);
  assert.equal(held(await acquireAll(alive, 1, 2)).length, 0);
  alive.close();
});

Deno.test("leases: a process killed (SIGKILL) holding slots gives them back once its leases expire", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite`;
  const ttlMs = 1500;
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--unstable-kv",
      new URL("../support/lease_process.ts", import.meta.url).pathname,
      path,
      "2",
      "2",
      String(ttlMs),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const kv = await Deno.openKv(path);
  const alive = new ConcurrencyLeases({
    kv,
    clock: systemClock,
    commits: new GroupCommit(kv),
    ttlMs,
  });
  try {
    const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("held")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the holder ended before it held its slots");
      said += value;
    }
    // Past a renewal (every third of the lease) while it lives: still held.
    await new Promise((r) => setTimeout(r, ttlMs * 0.8));
    assert.equal(held(await acquireAll(alive, 1, 2)).length, 0, "both slots held while it lives");
    holder.kill("SIGKILL");
    assert.equal((await holder.status).signal, "SIGKILL");
    reader.cancel().catch(() => {});
    const killedAt = Date.now();
    assert.equal(held(await acquireAll(alive, 1, 2)).length, 0, "held just after the kill");
    // Its last renewal was at most a third of the lease before the kill.
    await new Promise((r) => setTimeout(r, ttlMs + 200 - (Date.now() - killedAt)));
    const mine = held(await acquireAll(alive, 3, 2));
    assert.equal(mine.length, 2, "both slots came back, and the cap still holds");
    for (const lease of mine) await alive.release(lease);
  } finally {
    alive.close();
    kv.close();
    try {
      holder.kill("SIGKILL");
    } catch {
      // Already dead.
    }
    await holder.status;
    await Deno.remove(dir, { recursive: true });
  }
});
