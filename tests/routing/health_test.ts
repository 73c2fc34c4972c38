import assert from "node:assert/strict";
import type { RouteConfig } from "../../src/config.ts";
import { RouteHealth } from "../../src/routing/health.ts";
import { FakeClock } from "../support/server.ts";

const ROUTE: RouteConfig = { provider: "a", upstream_model: "m", weight: 1, priority: 0 };

Deno.test("breaker: opens after 5 failures in a row, lets one probe through after the cooldown, closes on its success", () => {
  const clock = new FakeClock();
  const health = new RouteHealth({ clock, failures: 5, cooldownMs: 30_000 });
  for (let i = 0; i < 4; i++) {
    health.begin("x", ROUTE);
    health.failed("x", ROUTE);
  }
  assert.equal(health.state("x", ROUTE), "closed");
  // A success in between resets the count; five in a row open it.
  health.begin("x", ROUTE);
  health.succeeded("x", ROUTE, 10);
  for (let i = 0; i < 5; i++) {
    health.begin("x", ROUTE);
    health.failed("x", ROUTE);
  }
  assert.equal(health.state("x", ROUTE), "open");
  assert.equal(health.available("x", ROUTE), false);
  clock.advance(29_999);
  assert.equal(health.available("x", ROUTE), false);
  clock.advance(1);
  assert.equal(health.state("x", ROUTE), "half_open");
  assert.equal(health.available("x", ROUTE), true);
  health.begin("x", ROUTE); // the probe
  assert.equal(health.available("x", ROUTE), false, "one probe at a time");
  health.failed("x", ROUTE);
  assert.equal(health.state("x", ROUTE), "open", "a failed probe opens it again");
  clock.advance(30_000);
  health.begin("x", ROUTE);
  health.succeeded("x", ROUTE, 12);
  assert.equal(health.state("x", ROUTE), "closed");
  const [stats] = health.stats();
  assert.equal(stats!.state, "closed");
  assert.equal(stats!.requests, 12);
  assert.equal(stats!.failures, 10);
  assert.equal(stats!.in_flight, 0);
});

Deno.test("health score: errors, slow first bytes and requests in flight lower a route's share", () => {
  const health = new RouteHealth({ clock: new FakeClock() });
  const fast = { ...ROUTE, provider: "fast" };
  const slow = { ...ROUTE, provider: "slow" };
  assert.equal(health.score("x", fast, null), 1);
  for (let i = 0; i < 10; i++) {
    health.begin("x", fast);
    health.succeeded("x", fast, 100);
    health.begin("x", slow);
    health.succeeded("x", slow, 400);
  }
  assert.ok(health.score("x", slow, 100) < health.score("x", fast, 100));
  health.begin("x", fast);
  assert.equal(health.score("x", fast, 100), 0.5);
  health.failed("x", fast);
  assert.ok(health.score("x", fast, 100) < 1);
});
