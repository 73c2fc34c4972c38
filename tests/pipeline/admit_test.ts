import assert from "node:assert/strict";
import { ANONYMOUS_CALLER } from "../../src/auth/authenticate.ts";
import { parseConfig } from "../../src/config/parse.ts";
import { ANONYMOUS, type KeyRecord, type Principal } from "../../src/auth/principal.ts";
import { clientClosed, rateLimited } from "../../src/errors.ts";
import { type Admission, RateLimiter } from "../../src/limits/limiter.ts";
import { Logger } from "../../src/log/logger.ts";
import { respond } from "../../src/pipeline/respond.ts";
import { settle } from "../../src/pipeline/settle.ts";
import { admit } from "../../src/pipeline/admit.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import {
  answerOf,
  endpoint,
  recordingSettler,
  storeFixture,
  testContext,
} from "../support/pipeline.ts";

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

/** The admit step over a limiter that calls every request likely and decides when told to,
 * inside the settle and respond steps; the handler streams until its signal fires. */
async function overlapSetup() {
  const fixture = await storeFixture();
  const decision = Promise.withResolvers<Admission>();
  const limiter = {
    likely: (): Principal => ANONYMOUS,
    admit: () => decision.promise,
  };
  const { settler, settled } = recordingSettler();
  const events: string[] = [];
  let signal: AbortSignal | null = null;
  const handler = async (ctx: RequestContext) => {
    events.push("handler");
    signal = ctx.signal;
    ctx.settleLater();
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    events.push("stopped");
    throw clientClosed();
  };
  const run = compose<RequestContext>([
    settle(settler),
    respond(new Logger({ clock: fixture.clock, output: fixture.output })),
    admit(limiter, fixture.store, fixture.clock),
  ], handler);
  const ctx = testContext(undefined, {
    endpoint: endpoint({ scope: "chat" }),
    settle: settler,
  });
  return { ...fixture, decision, run, ctx, events, settled, signal: () => signal };
}

Deno.test("admit: a request likely admitted runs while it is counted, and is answered only once it is", async () => {
  using fixture = await storeFixture();
  const decision = Promise.withResolvers<Admission>();
  const limiter = { likely: (): Principal => ANONYMOUS, admit: () => decision.promise };
  let handled = false;
  const run = compose<RequestContext>([admit(limiter, fixture.store, fixture.clock)], () => {
    handled = true;
    return new Response("ok");
  });
  const ctx = testContext(undefined, { endpoint: endpoint({ scope: "chat" }) });
  let answered = false;
  const answer = answerOf(run, ctx).then((a) => {
    answered = true;
    return a;
  });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(handled, "the handler ran before the count was committed");
  assert.ok(!answered, "but nothing was answered");
  const window = { name: "minute", limit: 10, remaining: 7, resetAt: 60_000 } as const;
  decision.resolve({ principal: ANONYMOUS, window });
  const { answer: response } = await answer;
  assert.ok(response instanceof Response);
  assert.deepEqual(ctx.window, window);
});

Deno.test("admit: a likely request refused after its work began: the work is stopped and the refusal answered, settled as the 429", async () => {
  const t = await overlapSetup();
  using _ = t;
  const answer = answerOf(t.run, t.ctx);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(t.events, ["handler"]);
  t.decision.reject(rateLimited("Rate limit reached.", new Headers()));
  const { answer: response } = await answer;
  assert.equal((response as Response).status, 429);
  assert.deepEqual(t.events, ["handler", "stopped"], "the work was stopped first");
  assert.equal(t.signal()?.aborted, true);
  assert.equal(t.ctx.refused?.status, 429);
  assert.deepEqual(t.settled.map((s) => [s.status, s.error]), [[429, "rate_limit_exceeded"]]);
});

Deno.test("admit: a likely request whose key changed meanwhile is stopped: 503 key_changed", async () => {
  const t = await overlapSetup();
  using _ = t;
  const answer = answerOf(t.run, t.ctx);
  const record = { id: "k1" } as unknown as KeyRecord;
  t.decision.resolve({ principal: { kind: "key", key: record }, window: null });
  const { answer: response } = await answer;
  assert.equal((response as Response).status, 503);
  assert.equal((await (response as Response).json()).error.code, "key_changed");
  assert.deepEqual(t.events, ["handler", "stopped"]);
  assert.deepEqual(t.settled.map((s) => s.status), [503]);
});

Deno.test("admit: a request not likely admitted reaches no handler before its count is committed", async () => {
  using fixture = await storeFixture();
  const decision = Promise.withResolvers<Admission>();
  const limiter = { likely: () => null, admit: () => decision.promise };
  let handled = false;
  const run = compose<RequestContext>([admit(limiter, fixture.store, fixture.clock)], () => {
    handled = true;
    return new Response("ok");
  });
  const answer = answerOf(run, testContext(undefined, { endpoint: endpoint({ scope: "chat" }) }));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(!handled);
  decision.resolve({ principal: ANONYMOUS, window: null });
  assert.ok((await answer).answer instanceof Response);
  assert.ok(handled);
});
