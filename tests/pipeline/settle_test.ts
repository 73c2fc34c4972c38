import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { Usage } from "../../src/canonical/result.ts";
import { ApiError, internalError, invalidRequest, upstreamError } from "../../src/errors.ts";
import { json } from "../../src/http/response.ts";
import { eventStreamResponse, type StreamRenderer } from "../../src/http/sse_response.ts";
import { Logger } from "../../src/log/logger.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { Handler, RequestContext } from "../../src/pipeline/context.ts";
import { respond } from "../../src/pipeline/respond.ts";
import { settle, type SettleHook, type Settlement, Settler } from "../../src/pipeline/settle.ts";
import { textEvents } from "../support/events.ts";
import { endpoint, recordingSettler, testContext } from "../support/pipeline.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

const USAGE: Usage = { input: 120, output: 30, cachedInput: 100, reasoning: 12 };
const encoder = new TextEncoder();

/** Renders each batch as one `data:` line of its event types. */
const renderer: StreamRenderer = {
  render: (events) => encoder.encode(`data: ${events.map((e) => e.type).join(",")}\n\n`),
  end: () => encoder.encode("data: [DONE]\n\n"),
  error: (error) => encoder.encode(`data: ${error.code}\n\n`),
};

/** Batches of one event each; a failure after `failAfter` batches when given. */
async function* batches(events: CanonicalEvent[], failAfter?: number) {
  for (const [i, event] of events.entries()) {
    if (i === failAfter) throw upstreamError("the upstream went away");
    await Promise.resolve();
    yield [event];
  }
}

/** A stream handler as the chat front door writes it: usage observed, settled by the body. */
function streaming(events: CanonicalEvent[], failAfter?: number): Handler {
  return (ctx) => {
    const abort = new AbortController();
    return eventStreamResponse(batches(events, failAfter), renderer, {
      abort,
      signal: abort.signal,
      settleLater: () => ctx.settleLater(),
      settle: ({ status, error }) => ctx.settle(status, error),
      onUnexpected: () => internalError(ctx.requestId),
    });
  };
}

/** The settle and respond steps around `handler`, with a recording settle hook. */
function pipeline(handler: Handler, request?: Request) {
  const { settler, settled, settlements, logger } = recordingSettler();
  const run = compose<RequestContext>(
    [settle(settler), respond(logger)],
    (ctx) => ctx.endpoint.handler(ctx),
  );
  const ctx = testContext(request, { settle: settler, endpoint: endpoint({ handler }) });
  return { run: () => run(ctx), ctx, settled, settlements, settler };
}

Deno.test("settle: once when the handler has answered, with the status and the usage", async () => {
  const { run, ctx, settled, settlements } = pipeline((ctx) => {
    ctx.usage = USAGE;
    return json({ ok: true }, 201);
  });
  const response = await run();
  assert.equal(response.status, 201);
  assert.deepEqual(settled, [{ requestId: ctx.requestId, status: 201, error: null, usage: USAGE }]);
  const [{ estimated, reason, firstByteMs }] = settlements as [Settlement];
  assert.deepEqual([estimated, reason], [false, null]);
  assert.ok(firstByteMs !== null && firstByteMs >= 0);
  ctx.settle(500, "late");
  assert.equal(settled.length, 1, "a second settle does nothing");
});

Deno.test("settle: once on an error, with its code (500 internal_error for a bug)", async () => {
  const refused = pipeline(() => {
    throw invalidRequest("no", "model", "invalid_value");
  });
  assert.equal((await refused.run()).status, 400);
  assert.deepEqual(refused.settled.map((s) => [s.status, s.error]), [[400, "invalid_value"]]);
  const bug = pipeline(() => {
    throw new TypeError("oops");
  });
  assert.equal((await bug.run()).status, 500);
  assert.deepEqual(bug.settled.map((s) => [s.status, s.error]), [[500, "internal_error"]]);
});

Deno.test("settle: a client that left is settled once as 499, whatever the handler answered", async () => {
  const client = new AbortController();
  const request = new Request("http://localhost/", { signal: client.signal });
  const { run, settled } = pipeline((ctx) => {
    client.abort();
    ctx.usage = USAGE;
    return json({ late: true });
  }, request);
  await run();
  assert.deepEqual(settled.map((s) => [s.status, s.error, s.usage]), [
    [499, "client_disconnected", USAGE],
  ]);
});

Deno.test("settle: a stream settles once, when its body ends, with its last usage", async () => {
  const { run, settled } = pipeline(streaming(textEvents(["Hi", " there"], USAGE)));
  const response = await run();
  assert.equal(settled.length, 0, "not when the handler returns");
  const text = await response.text();
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  assert.deepEqual(settled.map((s) => [s.status, s.error, s.usage]), [[200, null, USAGE]]);
});

Deno.test("settle: a stream cut by its upstream settles once with the error and the usage so far", async () => {
  const events = textEvents(["Hi", " there"], USAGE);
  const usageAt = events.findIndex((e) => e.type === "usage");
  const { run, settled } = pipeline(streaming(events, usageAt + 1));
  const text = await (await run()).text();
  assert.ok(text.endsWith("data: upstream_error\n\n"));
  assert.deepEqual(settled.map((s) => [s.status, s.error, s.usage]), [
    [502, "upstream_error", USAGE],
  ]);
});

Deno.test("settle: a stream the client stops reading settles once as 499", async () => {
  const { run, settled } = pipeline(streaming(textEvents(["Hi", " there"], USAGE)));
  const reader = (await run()).body!.getReader();
  await reader.read();
  await reader.cancel();
  await reader.cancel();
  assert.deepEqual(settled.map((s) => [s.status, s.error, s.usage]), [
    [499, "client_disconnected", null],
  ]);
});

Deno.test("settle: a stream left mid-way without usage is settled with its output estimated from the text", async () => {
  // 40 characters streamed before the client leaves; the usage event never came.
  const events = textEvents(["a".repeat(15), "b".repeat(25), "never sent"], USAGE);
  const { run, settlements } = pipeline(streaming(events));
  const reader = (await run()).body!.getReader();
  let text = "";
  while (!text.includes("block_delta")) {
    text += new TextDecoder().decode((await reader.read()).value);
  }
  await reader.read();
  await reader.cancel();
  assert.deepEqual(settlements.map((s) => [s.status, s.usage, s.estimated]), [
    [499, { input: 0, output: 10 }, true],
  ]);
});

Deno.test("settle: a stream whose back end reports no usage (zeros at its end) is settled with its output estimated", async () => {
  const events = textEvents(["z".repeat(40)], { input: 0, output: 0 });
  const { run, settlements } = pipeline(streaming(events));
  assert.ok((await (await run()).text()).endsWith("data: [DONE]\n\n"));
  assert.deepEqual(settlements.map((s) => [s.status, s.usage, s.estimated]), [
    [200, { input: 0, output: 10 }, true],
  ]);
});

Deno.test("settle: a stream left after a partial usage keeps its input and estimates a larger output", async () => {
  const start: Usage = { input: 50, output: 1 };
  const events = textEvents(["x".repeat(80), "never sent"], USAGE);
  events.splice(1, 0, { type: "usage", usage: start });
  const { run, settlements } = pipeline(streaming(events));
  const reader = (await run()).body!.getReader();
  for (let i = 0; i < 4; i++) await reader.read();
  await reader.cancel();
  assert.deepEqual(settlements.map((s) => [s.status, s.usage, s.estimated]), [
    [499, { input: 50, output: 20 }, true],
  ]);
});

Deno.test("Settler.close: requests still open settle as 503 server_shutdown with their tokens so far", async () => {
  const events = textEvents(["y".repeat(12), "never sent"], USAGE);
  const { run, settlements, settler } = pipeline(streaming(events));
  const reader = (await run()).body!.getReader();
  for (let i = 0; i < 3; i++) await reader.read();
  assert.deepEqual(settler.open(), { requests: 1, streams: 1 });
  await settler.close();
  assert.deepEqual(settlements.map((s) => [s.status, s.error, s.reason, s.usage, s.estimated]), [
    [503, "server_shutdown", "shutdown", { input: 0, output: 3 }, true],
  ]);
  assert.deepEqual(settler.open(), { requests: 0, streams: 0 });
  await reader.cancel();
  assert.equal(settlements.length, 1, "the stream's own end does not settle it again");
});

Deno.test("settle: a stream that fails before its first bytes is settled by the step, once", async () => {
  const { run, settled } = pipeline(streaming(textEvents(["Hi"]), 0));
  const response = await run();
  assert.equal(response.status, 502);
  assert.deepEqual(settled.map((s) => [s.status, s.error]), [[502, "upstream_error"]]);
});

Deno.test("settle: a handler that failed after leaving settling to its body is settled at once", async () => {
  const { run, ctx, settled } = pipeline((ctx) => {
    ctx.settleLater();
    throw new ApiError(502, "upstream_error", "gone", { code: "upstream_error" });
  });
  await run();
  ctx.settle(200, null);
  assert.deepEqual(settled.map((s) => [s.status, s.error]), [[502, "upstream_error"]]);
});

Deno.test("Settler: hooks run in order, an async hook holds the next, a failing hook is reported", async () => {
  const order: string[] = [];
  const output = new CapturedOutput();
  const logger = new Logger({ clock: new FakeClock(), output });
  const gate = Promise.withResolvers<void>();
  const hooks: SettleHook[] = [
    (_ctx, { status }) => void order.push(`ledger ${status}`),
    () => {
      throw new Error("hook one broke");
    },
    async () => {
      await gate.promise;
      order.push("async");
    },
    () => Promise.reject(new Error("hook three broke")),
    (_ctx, { usage }) => void order.push(`log ${usage?.input}`),
  ];
  const ctx = testContext(undefined, { settle: new Settler(hooks, logger) });
  ctx.usage = USAGE;
  ctx.settle(200, null);
  ctx.settle(200, null);
  assert.deepEqual(order, ["ledger 200"], "the hooks after an async one wait for it");
  gate.resolve();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(order, ["ledger 200", "async", "log 120"]);
  const errors = output.err.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(errors.map((e) => [e.message, e.request_id]), [
    ["a settle hook failed", ctx.requestId],
    ["a settle hook failed", ctx.requestId],
  ]);
  assert.match(errors[0].error, /hook one broke/);
  assert.match(errors[1].error, /hook three broke/);
});

Deno.test("Settler: the settlement's ms is the time from arrival to settling", async () => {
  const seen: number[] = [];
  const logger = new Logger({ clock: new FakeClock(), output: new CapturedOutput() });
  const ctx = testContext(undefined, {
    settle: new Settler([(_ctx, { ms }) => void seen.push(ms)], logger),
  });
  await new Promise((r) => setTimeout(r, 20));
  ctx.settle(200, null);
  assert.ok(seen[0]! >= 15 && seen[0]! < 1000, `ms ${seen[0]}`);
});

Deno.test("settle: liveAt moves when a live request begins and ends, not for a batch line", async () => {
  const line = pipeline(() => json({ ok: true }));
  line.ctx.onBehalf = {
    caller: { kind: "anonymous" },
    batchId: "batch_1",
  } as unknown as NonNullable<RequestContext["onBehalf"]>;
  await line.run();
  assert.equal(line.settler.liveAt, 0);
  const before = performance.now();
  const live = pipeline(() => json({ ok: true }));
  await live.run();
  assert.ok(live.settler.liveAt >= before);
});
