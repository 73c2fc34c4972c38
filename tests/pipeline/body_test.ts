import assert from "node:assert/strict";
import { body } from "../../src/pipeline/body.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import { Expiries } from "../../src/http/expiries.ts";
import { endpoint, testContext } from "../support/pipeline.ts";

const LIMITS = { max_body_bytes: 64, body_timeout_ms: 1000 };

/** Runs the body step for `request` to an endpoint that does (`json`) or does not read JSON;
 * the handler sees the context. */
async function run(
  request: Request,
  json: boolean,
  handler = (_ctx: RequestContext) => {},
) {
  const step = compose<RequestContext>([body(LIMITS, new Expiries(5))], (ctx) => {
    handler(ctx);
    return new Response("ok");
  });
  const ctx = testContext(request, { endpoint: endpoint({ json }) });
  let answer: unknown;
  try {
    answer = await step(ctx);
  } catch (e) {
    answer = e;
  }
  return { ctx, answer };
}

const post = (text: string, type = "application/json") =>
  new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": type },
    body: text,
  });

Deno.test("body: a JSON endpoint gets the body's object; the front door parses it", async () => {
  const { ctx, answer } = await run(post('{"model":"m","n":2}'), true);
  assert.ok(answer instanceof Response);
  assert.deepEqual(ctx.body, { model: "m", n: 2 });
});

Deno.test("body: the read's 400s, 413s and the empty body are answered before the handler", async () => {
  let handled = 0;
  const cases: [Request, number, string][] = [
    [post("[1]"), 400, "invalid_json"],
    [post("{}", "text/plain"), 400, "invalid_content_type"],
    [post("x".repeat(65)), 413, "request_too_large"],
    [new Request("http://localhost/", { method: "POST" }), 400, "invalid_content_type"],
  ];
  for (const [request, status, code] of cases) {
    const { answer } = await run(request, true, () => handled++);
    assert.equal((answer as { status: number }).status, status, code);
    assert.equal((answer as { code: string }).code, code);
  }
  assert.equal(handled, 0);
});

Deno.test("body: an endpoint that reads no JSON leaves the body to its handler", async () => {
  const { ctx, answer } = await run(post("{}"), false);
  assert.ok(answer instanceof Response);
  assert.deepEqual(ctx.body, {});
  assert.equal(ctx.request.bodyUsed, false);
});

Deno.test("body: the handler's signal is the request's (the server aborts it when the client leaves)", async () => {
  const { ctx } = await run(post("{}"), true);
  assert.equal(ctx.signal, ctx.request.signal);
});
