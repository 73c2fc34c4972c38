import assert from "node:assert/strict";
import type { RouteConfig } from "../../src/config/types.ts";
import { RouteHealth } from "../../src/routing/health.ts";
import { type Candidate, routeOrder } from "../../src/routing/select.ts";
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

/** `routes` of model "x" with their health in `health`. */
const candidates = (health: RouteHealth, ...routes: RouteConfig[]): Candidate[] =>
  routes.map((r) => ({ route: r, health: health.of("x", r) }));

Deno.test("selection: weights 3:1 hold over 1,000 requests with a fixed seed (within 4 sigma)", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const routes = candidates(health, route("a", 3), route("b", 1));
  const random = seeded(42);
  let a = 0;
  for (let i = 0; i < 1000; i++) {
    if (routeOrder(routes, random)[0]!.route.provider === "a") a++;
  }
  // Binomial(1000, 0.75): mean 750, sigma ~13.7.
  assert.ok(Math.abs(a - 750) < 4 * 13.7, `${a} of 1,000 went to the weight-3 route`);
});

Deno.test("selection: weights 2:1:1 hold over 3,000 requests, the order's other places too", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const routes = candidates(health, route("a", 2), route("b", 1), route("c", 1));
  const random = seeded(3);
  const first: Record<string, number> = { a: 0, b: 0, c: 0 };
  const lastB: Record<string, number> = { a: 0, b: 0, c: 0 };
  for (let i = 0; i < 3000; i++) {
    const order = routeOrder(routes, random).map((c) => c.route.provider);
    assert.equal(new Set(order).size, 3, "every route once");
    first[order[0]!]!++;
    lastB[order[2]!]!++;
  }
  // First pick: Binomial(3000, 1/2) for a (sigma ~27.4), 1/4 each for b and c (~23.7).
  assert.ok(Math.abs(first.a! - 1500) < 4 * 27.4, JSON.stringify(first));
  assert.ok(Math.abs(first.b! - 750) < 4 * 23.7, JSON.stringify(first));
  // Last place: a is last with P = 1/4·1/3 + 1/4·1/3 = 1/6 (500); b and c with 5/12 (1,250).
  assert.ok(Math.abs(lastB.a! - 500) < 4 * 20.4, JSON.stringify(lastB));
  assert.ok(Math.abs(lastB.b! - 1250) < 4 * 27, JSON.stringify(lastB));
});

Deno.test("selection: the best priority serves; lower ones follow, open breakers are skipped", () => {
  const clock = new FakeClock();
  const health = new RouteHealth({ clock, failures: 1 });
  const [backup, primary, other] = candidates(
    health,
    route("backup", 5, 1),
    route("primary", 1, 0),
    route("other", 1, 0),
  ) as [Candidate, Candidate, Candidate];
  const random = seeded(7);
  for (let i = 0; i < 50; i++) {
    const order = routeOrder([backup, primary, other], random);
    assert.equal(order[2], backup, "the backup comes after every priority-0 route");
  }
  primary.health.begin();
  primary.health.failed();
  assert.deepEqual(routeOrder([primary, other, backup], random), [other, backup]);
  // With every breaker open, all are tried anyway, best priority first.
  for (const c of [other, backup]) {
    c.health.begin();
    c.health.failed();
  }
  assert.deepEqual(
    routeOrder([backup, primary, other], random).map((c) => c.route.priority),
    [0, 0, 1],
  );
});
