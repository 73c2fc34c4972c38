import assert from "node:assert/strict";
import { AdminToken, TokenAttempts } from "../../src/auth/admin_token.ts";
import { auth } from "../../src/pipeline/auth.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import { answerOf, endpoint, storeFixture, testContext } from "../support/pipeline.ts";

const ADMIN = "admin-token-for-the-pipeline-test-0123";

/** The auth step over a fresh in-memory KV, with the admin token {@link ADMIN}. */
async function setup() {
  const fixture = await storeFixture();
  const run = compose<RequestContext>(
    [auth(new AdminToken(ADMIN, new TokenAttempts(fixture)), fixture.keys, fixture.store)],
    (ctx) => ctx.endpoint.handler(ctx),
  );
  const send = (mode: "key" | "admin" | "none", authorization?: string) => {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    return answerOf(
      run,
      testContext(new Request("http://localhost/", { headers }), {
        endpoint: endpoint({ auth: mode, scope: mode === "key" ? "chat" : null, path: "/admin/x" }),
      }),
    );
  };
  return { ...fixture, send };
}

Deno.test("auth: by key, no header is the anonymous caller and a known key its caller", async () => {
  using t = await setup();
  const anonymous = await t.send("key");
  assert.deepEqual(anonymous.ctx.caller, { kind: "anonymous" });
  assert.ok(anonymous.answer instanceof Response);
  const { key, record } = await t.keys.create({ name: "a" });
  const keyed = await t.send("key", `Bearer ${key}`);
  assert.equal(keyed.ctx.caller.kind, "key");
  assert.equal(keyed.ctx.caller.kind === "key" && keyed.ctx.caller.entry.record.id, record.id);
  assert.equal(keyed.ctx.principal.kind, "anonymous", "the principal is admit's to set");
});

Deno.test("auth: a malformed or unknown key is a 401 that reaches no handler", async () => {
  using t = await setup();
  for (const header of ["Basic abc", `Bearer sk-sy-${"Z".repeat(32)}`]) {
    const { answer } = await t.send("key", header);
    assert.equal((answer as { status: number }).status, 401, header);
  }
});

Deno.test("auth: an unhealthy store is a 503 before the key is looked at; a failing lookup too", async () => {
  using t = await setup();
  t.health.failed(new Error("disk full"));
  const { answer } = await t.send("key", "Basic abc");
  assert.equal((answer as { status: number }).status, 503);
  assert.equal((answer as { code: string }).code, "service_unavailable");

  using u = await setup();
  u.breakStore();
  const lookup = await u.send("key", `Bearer sk-sy-${"A".repeat(32)}`);
  assert.equal((lookup.answer as { status: number }).status, 503);
  assert.equal(u.health.status.healthy, false);
  assert.match(u.output.err, /KV failed while admitting a request/);
});

Deno.test("auth: endpoints that identify nobody never read the Authorization header", async () => {
  using t = await setup();
  const { ctx, answer } = await t.send("none", "Bearer not-even-a-key");
  assert.deepEqual(ctx.caller, { kind: "anonymous" });
  assert.ok(answer instanceof Response);
});

Deno.test("auth: the admin token lets an admin request through; without it the request is refused after admission", async () => {
  using t = await setup();
  const admin = await t.send("admin", `Bearer ${ADMIN}`);
  assert.ok(admin.answer instanceof Response);
  assert.equal(admin.ctx.endpoint.scope, null);
  for (const header of [undefined, "Bearer wrong"]) {
    const { ctx, answer } = await t.send("admin", header);
    assert.equal((answer as { status: number }).status, 401);
    assert.equal(ctx.endpoint.scope, "other", "it counts against the IP's other limit");
    assert.equal(ctx.endpoint.auth, "none");
    assert.equal(ctx.endpoint.path, "/admin/x", "metrics count it under its route");
    assert.deepEqual(ctx.caller, { kind: "anonymous" });
  }
});
