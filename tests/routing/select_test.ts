import assert from "node:assert/strict";
import type { RouteConfig } from "../../src/config.ts";
import { RouteHealth } from "../../src/routing/health.ts";
import { routeOrder } from "../../src/routing/select.ts";
import { FakeClock } from "../support/server.ts";

/** A seeded generator (mulberry32): the same numbers on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const route = (provider: string, weight: number, priority = 0): RouteConfig => ({
  provider,
  upstream_model: "m",
  weight,
  priority,
});

Deno.test("selection: weights 3:1 hold over 1,000 requests with a fixed seed (within 4 sigma)", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const routes = [route("a", 3), route("b", 1)];
  const random = seeded(42);
  let a = 0;
  for (let i = 0; i < 1000; i++) {
    if (routeOrder("x", routes, health, random)[0]!.provider === "a") a++;
  }
  // Binomial(1000, 0.75): mean 750, sigma ~13.7.
  assert.ok(Math.abs(a - 750) < 4 * 13.7, `${a} of 1,000 went to the weight-3 route`);
});

Deno.test("selection: the best priority serves; lower ones follow, open breakers are skipped", () => {
  const clock = new FakeClock();
  const health = new RouteHealth({ clock, failures: 1 });
  const primary = route("primary", 1, 0);
  const other = route("other", 1, 0);
  const backup = route("backup", 5, 1);
  const random = seeded(7);
  for (let i = 0; i < 50; i++) {
    const order = routeOrder("x", [backup, primary, other], health, random);
    assert.equal(order[2], backup, "the backup comes after every priority-0 route");
  }
  health.begin("x", primary);
  health.failed("x", primary);
  assert.deepEqual(routeOrder("x", [primary, other, backup], health, random), [other, backup]);
  // With every breaker open, all are tried anyway, best priority first.
  for (const r of [other, backup]) {
    health.begin("x", r);
    health.failed("x", r);
  }
  assert.deepEqual(
    routeOrder("x", [backup, primary, other], health, random).map((r) => r.priority),
    [0, 0, 1],
  );
});
