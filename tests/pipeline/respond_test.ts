import assert from "node:assert/strict";
import { ApiError, rateLimited } from "../../src/errors.ts";
import { truncateText } from "../../src/log/record.ts";
import { Logger } from "../../src/log/logger.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { Handler, RequestContext } from "../../src/pipeline/context.ts";
import { respond } from "../../src/pipeline/respond.ts";
import { endpoint, testContext } from "../support/pipeline.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

function run(handler: Handler, admitted = false, request?: Request) {
  const output = new CapturedOutput();
  const clock = new FakeClock();
  const step = compose<RequestContext>(
    [respond(new Logger({ clock, output }))],
    (ctx) => ctx.endpoint.handler(ctx),
  );
  const ctx = testContext(request, { endpoint: endpoint({ handler }) });
  if (admitted) {
    ctx.window = { name: "minute", limit: 10, remaining: 7, resetAt: clock.now() + 30_000 };
    ctx.admittedAt = clock.now();
  }
  return { response: Promise.resolve(step(ctx)), ctx, output };
}

Deno.test("respond: an ApiError is its JSON error body, status and headers; its code is kept", async () => {
  const { response, ctx } = run(() => {
    throw new ApiError(409, "invalid_request_error", "taken", {
      code: "conflict",
      param: "name",
      headers: { "x-extra": "1" },
    });
  });
  const res = await response;
  assert.equal(res.status, 409);
  assert.equal(res.headers.get("x-extra"), "1");
  assert.deepEqual(await res.json(), {
    error: { message: "taken", type: "invalid_request_error", code: "conflict", param: "name" },
  });
  assert.equal(ctx.error, "conflict");
});

Deno.test("respond: an unexpected error is a 500 naming only the request id, its stack on stderr", async () => {
  const { response, ctx, output } = run(() => {
    throw new TypeError("secret detail");
  });
  const res = await response;
  assert.equal(res.status, 500);
  const text = await res.text();
  assert.doesNotMatch(text, /secret detail/);
  assert.match(text, new RegExp(ctx.requestId));
  assert.equal(ctx.error, "internal_error");
  const line = JSON.parse(output.err);
  assert.equal(line.message, "unhandled error in GET /");
  assert.equal(line.request_id, ctx.requestId);
  assert.match(line.error, /secret detail/);
});

Deno.test("respond: the stderr line of an unexpected error bounds the path as the request log does", async () => {
  const path = "/v1/responses/" + "a".repeat(3000);
  const { response, output } = run(
    () => {
      throw new TypeError("boom");
    },
    false,
    new Request(`http://localhost${path}`),
  );
  await (await response).body?.cancel();
  const line = JSON.parse(output.err);
  assert.equal(line.message, `unhandled error in GET ${truncateText(path, 256)}`);
  assert.ok(line.message.length < 300);
});

Deno.test("respond: an admitted request's answer carries its window's rate-limit headers, errors too", async () => {
  for (
    const handler of [
      () => new Response("ok"),
      () => {
        throw new ApiError(400, "invalid_request_error", "bad");
      },
    ]
  ) {
    const res = await run(handler, true).response;
    await res.body?.cancel();
    assert.equal(res.headers.get("x-ratelimit-limit-requests"), "10");
    assert.equal(res.headers.get("x-ratelimit-remaining-requests"), "7");
    assert.equal(res.headers.get("x-ratelimit-reset-requests"), "30s");
  }
  const refused = await run(() => {
    throw rateLimited("slow down", { "retry-after": "3", "x-ratelimit-limit-requests": "2" });
  }).response;
  await refused.body?.cancel();
  assert.equal(refused.headers.get("x-ratelimit-limit-requests"), "2", "a 429 keeps its own");
  const { ctx, response } = run(() => new Response("ok"));
  const plain = await response;
  await plain.body?.cancel();
  assert.equal(ctx.error, null);
  assert.equal(plain.headers.get("x-ratelimit-limit-requests"), null);
});
