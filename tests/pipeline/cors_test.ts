import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { Cors } from "../../src/http/cors.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import { cors, preflightEndpoint } from "../../src/pipeline/cors.ts";
import { respond } from "../../src/pipeline/respond.ts";
import { Logger } from "../../src/log/logger.ts";
import { endpoint, testContext } from "../support/pipeline.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

const logger = new Logger({ clock: new FakeClock(), output: new CapturedOutput() });

Deno.test("cors: every answer, error or not, carries the request id and the CORS headers", async () => {
  const run = compose<RequestContext>(
    [cors(new Cors(["https://good.example"])), respond(logger)],
    (ctx) => ctx.endpoint.handler(ctx),
  );
  const headers = { origin: "https://good.example" };
  for (
    const handler of [
      () => new Response("ok"),
      () => {
        throw new ApiError(400, "invalid_request_error", "bad");
      },
    ]
  ) {
    const ctx = testContext(new Request("http://localhost/", { headers }), {
      endpoint: endpoint({ handler }),
    });
    const res = await run(ctx);
    await res.body?.cancel();
    assert.equal(res.headers.get("x-request-id"), ctx.requestId);
    assert.match(ctx.requestId, /^req_[0-9a-f]{32}$/);
    assert.equal(res.headers.get("access-control-allow-origin"), "https://good.example");
    assert.match(res.headers.get("access-control-expose-headers")!, /x-request-id/);
    assert.equal(res.headers.get("vary"), "Origin");
  }
  const other = testContext(
    new Request("http://localhost/", { headers: { origin: "https://x" } }),
    {
      endpoint: endpoint(),
    },
  );
  const res = await run(other);
  await res.body?.cancel();
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  assert.equal(res.headers.get("x-request-id"), other.requestId);
  // Whether the answer allows an origin depends on Origin: a cache must know, allowed or not.
  assert.equal(res.headers.get("vary"), "Origin");
  const none = await run(testContext(new Request("http://localhost/"), { endpoint: endpoint() }));
  await none.body?.cancel();
  assert.equal(none.headers.get("vary"), "Origin");
});

Deno.test("cors: a browser may read every header the gateway sets for it", async () => {
  const run = compose<RequestContext>(
    [cors(new Cors(["*"])), respond(logger)],
    (ctx) => ctx.endpoint.handler(ctx),
  );
  const ctx = testContext(
    new Request("http://localhost/", { headers: { origin: "https://a.example" } }),
    { endpoint: endpoint() },
  );
  const res = await run(ctx);
  await res.body?.cancel();
  assert.equal(res.headers.get("vary"), null);
  const exposed = res.headers.get("access-control-expose-headers")!.split(", ");
  for (const kind of ["requests", "tokens"]) {
    for (const part of ["limit", "remaining", "reset"]) {
      assert.ok(exposed.includes(`x-ratelimit-${part}-${kind}`), `x-ratelimit-${part}-${kind}`);
    }
  }
  for (
    const name of [
      "x-request-id",
      "retry-after",
      "x-switchyard-dropped-params",
      "x-switchyard-route",
      "x-switchyard-cache",
    ]
  ) {
    assert.ok(exposed.includes(name), name);
  }
});

Deno.test("cors: the preflight endpoint is counted as other for the anonymous caller and answers the preflight", async () => {
  const preflight = preflightEndpoint(new Cors(["*"]));
  assert.equal(preflight.scope, "other");
  assert.equal(preflight.auth, "none");
  const ctx = testContext(
    new Request("http://localhost/v1/models", {
      method: "OPTIONS",
      headers: { origin: "https://a.example", "access-control-request-method": "GET" },
    }),
  );
  const res = await preflight.handler(ctx);
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
});
