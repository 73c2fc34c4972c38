import assert from "node:assert/strict";
import type { RouteConfig } from "../../src/config/types.ts";
import { RouteHealth } from "../../src/routing/health.ts";
import { FakeClock } from "../support/server.ts";

const ROUTE: RouteConfig = { provider: "a", upstream_model: "m", weight: 1, priority: 0 };

Deno.test("breaker: opens after 5 failures in a row, lets one probe through after the cooldown, closes on its success", () => {
  const clock = new FakeClock();
  const health = new RouteHealth({ clock, failures: 5, cooldownMs: 30_000 });
  const route = health.of("x", ROUTE);
  for (let i = 0; i < 4; i++) {
    route.begin();
    route.failed();
  }
  assert.equal(route.state(), "closed");
  // A success in between resets the count; five in a row open it.
  route.begin();
  route.succeeded(10);
  for (let i = 0; i < 5; i++) {
    route.begin();
    route.failed();
  }
  assert.equal(route.state(), "open");
  assert.equal(route.available(), false);
  clock.advance(29_999);
  assert.equal(route.available(), false);
  clock.advance(1);
  assert.equal(route.state(), "half_open");
  assert.equal(route.available(), true);
  route.begin(); // the probe
  assert.equal(route.available(), false, "one probe at a time");
  route.failed();
  assert.equal(route.state(), "open", "a failed probe opens it again");
  clock.advance(30_000);
  route.begin();
  route.succeeded(12);
  assert.equal(route.state(), "closed");
  const [stats] = health.stats();
  assert.equal(stats!.state, "closed");
  assert.equal(stats!.requests, 12);
  assert.equal(stats!.failures, 10);
  assert.equal(stats!.in_flight, 0);
});

Deno.test("health: one state per model, provider and upstream model, whatever route object names it", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const state = health.of("x", ROUTE);
  const edited = { ...ROUTE, weight: 3 };
  assert.equal(health.of("x", edited), state, "a catalogue edit keeps the route's health");
  assert.equal(state.route.weight, 3, "with the route as it is now");
  assert.notEqual(health.of("y", ROUTE), state);
  assert.notEqual(health.of("x", { ...ROUTE, upstream_model: "n" }), state);
  assert.equal(health.stats().length, 3);
});

Deno.test("health score: errors, slow first bytes and requests in flight lower a route's share", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const fast = health.of("x", { ...ROUTE, provider: "fast" });
  const slow = health.of("x", { ...ROUTE, provider: "slow" });
  assert.equal(fast.score(null), 1);
  for (let i = 0; i < 10; i++) {
    fast.begin();
    fast.succeeded(100);
    slow.begin();
    slow.succeeded(400);
  }
  assert.ok(slow.score(100) < fast.score(100));
  fast.begin();
  assert.equal(fast.score(100), 0.5);
  fast.failed();
  assert.ok(fast.score(100) < 1);
});
