import assert from "node:assert/strict";
import { KvHealth } from "../../src/kv/health.ts";
import { startServer, testConfig } from "../support/server.ts";
import { FakeClock } from "../support/server.ts";

/** A KV store whose writes fail while `broken` is set. */
function breakableKv(kv: Deno.Kv) {
  const state = { broken: false };
  const fail = () => Promise.reject(new TypeError("attempt to write a readonly database"));
  const wrapped = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "set" || prop === "delete") {
        return (...args: unknown[]) => (state.broken ? fail() : value.apply(target, args));
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => (state.broken ? fail() : commit());
          return op;
        };
      }
      return value.bind(target);
    },
  });
  return { kv: wrapped, state };
}

Deno.test("KvHealth: a failed operation makes the store unhealthy until a probe write succeeds", async () => {
  using raw = await Deno.openKv(":memory:");
  const { kv, state } = breakableKv(raw);
  const clock = new FakeClock();
  const reasons: string[] = [];
  const health = new KvHealth({ kv, clock, path: null, onUnhealthy: (r) => reasons.push(r) });
  assert.deepEqual(await health.check(), { healthy: true, reason: null });
  state.broken = true;
  clock.advance(1000);
  const down = await health.check();
  assert.equal(down.healthy, false);
  assert.match(down.reason!, /readonly database/);
  assert.equal(reasons.length, 1);
  state.broken = false;
  clock.advance(999);
  assert.equal((await health.check()).healthy, false, "probes at most once a second");
  clock.advance(1);
  assert.deepEqual(await health.check(), { healthy: true, reason: null });
});

Deno.test("KvHealth: a KV file deleted or replaced under the process is reported, without its path", async () => {
  using kv = await Deno.openKv(":memory:");
  let identity: string | null = "1:100";
  const health = new KvHealth({
    kv,
    clock: new FakeClock(),
    path: "/var/lib/switchyard/kv.sqlite",
    identity: () => Promise.resolve(identity),
    intervalMs: 5,
  });
  await health.start();
  try {
    assert.equal(health.status.healthy, true);
    identity = "1:200";
    for (let i = 0; i < 100 && health.status.healthy; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(health.status.healthy, false);
    assert.match(health.status.reason!, /replaced while in use; restart/);
    assert.doesNotMatch(health.status.reason!, /var\/lib/);
  } finally {
    health.close();
  }
});

Deno.test("a failing KV: limited endpoints answer 503 service_unavailable and /healthz 503 with the reason, then recover", async () => {
  using raw = await Deno.openKv(":memory:");
  const { kv, state } = breakableKv(raw);
  const clock = new FakeClock();
  await using server = await startServer({ kv, clock, config: testConfig() });
  const chat = () =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "hi" }] }),
    });
  assert.equal((await (await chat()).json()).object, "chat.completion");
  state.broken = true;
  const refused = await chat();
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "5");
  const body = await refused.json();
  assert.equal(body.error.code, "service_unavailable");
  const models = await fetch(`${server.url}/v1/models`);
  assert.equal(models.status, 503);
  await models.body?.cancel();
  clock.advance(1000);
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 503);
  assert.match((await health.json()).reason, /KV operation failed/);
  state.broken = false;
  clock.advance(1000);
  const healed = await fetch(`${server.url}/healthz`);
  assert.equal(healed.status, 200);
  await healed.body?.cancel();
  assert.equal((await chat()).status, 200);
});
