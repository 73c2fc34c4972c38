import assert from "node:assert/strict";
import { compose, type Next, type Step } from "../../src/pipeline/compose.ts";

/** A context that records the order in which steps ran. */
interface Trace {
  seen: string[];
}

/** A step that notes its name before and after the rest of the pipeline. */
function around(name: string): Step<Trace> {
  return async (ctx, next) => {
    ctx.seen.push(`${name}>`);
    const response = await next(ctx);
    ctx.seen.push(`<${name}`);
    return response;
  };
}

const last: Next<Trace> = (ctx) => {
  ctx.seen.push("last");
  return new Response("last");
};

Deno.test("compose runs the steps outermost first, then the last, and unwinds in reverse", async () => {
  const run = compose([around("a"), around("b"), around("c")], last);
  const ctx: Trace = { seen: [] };
  const response = await run(ctx);
  assert.equal(await response.text(), "last");
  assert.deepEqual(ctx.seen, ["a>", "b>", "c>", "last", "<c", "<b", "<a"]);
});

Deno.test("a step that answers itself short-circuits the steps after it", async () => {
  const refuse: Step<Trace> = (ctx) => {
    ctx.seen.push("refuse");
    return new Response("no", { status: 429 });
  };
  const run = compose([around("a"), refuse, around("c")], last);
  const ctx: Trace = { seen: [] };
  const response = await run(ctx);
  assert.equal(response.status, 429);
  assert.deepEqual(ctx.seen, ["a>", "refuse", "<a"]);
});

Deno.test("a step's error reaches the steps before it, which may answer it", async () => {
  const failing: Step<Trace> = () => {
    throw new Error("boom");
  };
  const catching: Step<Trace> = async (ctx, next) => {
    try {
      return await next(ctx);
    } catch (e) {
      return new Response((e as Error).message, { status: 500 });
    }
  };
  const run = compose([catching, around("b"), failing], last);
  const ctx: Trace = { seen: [] };
  const response = await run(ctx);
  assert.equal(await response.text(), "boom");
  assert.deepEqual(ctx.seen, ["b>"], "b does not unwind past the error");
});

Deno.test("no steps: the last answers; the chain is linked once, not per request", async () => {
  assert.equal(await (await compose([], last)({ seen: [] })).text(), "last");
  const nexts = new Set<Next<Trace>>();
  const spy: Step<Trace> = (ctx, next) => {
    nexts.add(next);
    return next(ctx);
  };
  const run = compose([spy, around("b")], last);
  await run({ seen: [] });
  await run({ seen: [] });
  assert.equal(nexts.size, 1, "every request gets the same next");
});
