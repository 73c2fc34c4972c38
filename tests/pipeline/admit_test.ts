import assert from "node:assert/strict";
import { ANONYMOUS_CALLER } from "../../src/auth/authenticate.ts";
import { parseConfig } from "../../src/config.ts";
import { RateLimiter } from "../../src/limits/limiter.ts";
import { admit } from "../../src/pipeline/admit.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import { answerOf, endpoint, storeFixture, testContext } from "../support/pipeline.ts";

/** The admit step over a fresh in-memory KV; anonymous chat is 2 a minute. */
async function setup() {
  const fixture = await storeFixture();
  const { kv, clock, keys, store } = fixture;
  const config = parseConfig({
    providers: [{ id: "sim", style: "simulator" }],
    limits: { anonymous: { chat: { per_minute: 2, per_day: 100 } } },
  }, "test");
  const limiter = new RateLimiter({ kv, clock, limits: config.limits, keys });
  let handled = 0;
  const run = compose<RequestContext>([admit(limiter, store, clock)], () => {
    handled++;
    return new Response("ok");
  });
  const send = (scope: "chat" | null) =>
    answerOf(run, testContext(undefined, { endpoint: endpoint({ scope }) }));
  return { ...fixture, send, handled: () => handled };
}

Deno.test("admit: a limited endpoint's request is counted; its window and time are kept for the headers", async () => {
  using t = await setup();
  const { ctx, answer } = await t.send("chat");
  assert.ok(answer instanceof Response);
  assert.equal(ctx.window?.limit, 2);
  assert.equal(ctx.window?.remaining, 1);
  assert.equal(ctx.admittedAt, t.clock.now());
  assert.deepEqual(ctx.principal, { kind: "anonymous" });
  assert.equal(ctx.caller, ANONYMOUS_CALLER);
});

Deno.test("admit: over the limit is a 429 that reaches no handler", async () => {
  using t = await setup();
  await t.send("chat");
  await t.send("chat");
  const { ctx, answer } = await t.send("chat");
  assert.equal((answer as { status: number }).status, 429);
  assert.equal(ctx.window, null, "a refused request's headers are the 429's own");
  assert.equal(t.handled(), 2);
});

Deno.test("admit: an endpoint that is not limited is not counted", async () => {
  using t = await setup();
  for (let i = 0; i < 5; i++) {
    const { ctx, answer } = await t.send(null);
    assert.ok(answer instanceof Response);
    assert.equal(ctx.window, null);
  }
  t.health.failed(new Error("down"));
  assert.ok((await t.send(null)).answer instanceof Response, "nor does it need the store");
});

Deno.test("admit: an unhealthy or failing store is a 503, never a 500", async () => {
  using t = await setup();
  t.health.failed(new Error("disk full"));
  const unhealthy = await t.send("chat");
  assert.equal((unhealthy.answer as { status: number }).status, 503);
  using u = await setup();
  u.breakStore();
  const failing = await u.send("chat");
  assert.equal((failing.answer as { status: number }).status, 503);
  assert.equal(u.health.status.healthy, false);
  assert.match(u.output.err, /KV failed while admitting a request/);
  assert.equal(u.handled(), 0);
});
