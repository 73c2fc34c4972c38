import assert from "node:assert/strict";
import { admin, ADMIN_TOKEN, startAdminServer } from "../../support/admin.ts";
import { startServer } from "../../support/server.ts";

const PATHS = [
  ["GET", "/admin/keys"],
  ["POST", "/admin/keys"],
  ["GET", "/admin/keys/key_x"],
  ["PATCH", "/admin/keys/key_x"],
  ["DELETE", "/admin/keys/key_x"],
  ["GET", "/admin/models"],
  ["GET", "/admin/models/sim-chat"],
  ["PUT", "/admin/models/sim-chat"],
  ["DELETE", "/admin/models/sim-chat"],
  ["GET", "/admin/logs"],
  ["GET", "/admin/usage"],
] as const;

Deno.test("without SWITCHYARD_ADMIN_TOKEN every /admin path is a 404 like an unknown path", async () => {
  await using server = await startServer();
  const unknown = await admin(server, "GET", "/nope", undefined, null);
  assert.equal(unknown.status, 404);
  for (const [method, path] of [...PATHS, ["GET", "/admin/other"] as const]) {
    for (const token of [null, ADMIN_TOKEN, "wrong"]) {
      const res = await admin(server, method, path, undefined, token);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.error.code, "unknown_url");
      assert.equal(res.body.error.message, `Unknown request URL: ${method} ${path}.`);
    }
  }
});

Deno.test("a missing, malformed or wrong admin token is a 401 on every admin route", async () => {
  await using server = await startAdminServer();
  for (const [method, path] of PATHS) {
    for (const token of [null, "wrong", ADMIN_TOKEN + "x", ADMIN_TOKEN.slice(0, -1), ""]) {
      const res = await admin(server, method, path, undefined, token);
      assert.equal(res.status, 401, `${method} ${path} with ${JSON.stringify(token)}`);
      assert.equal(res.body.error.type, "authentication_error");
    }
    const basic = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Basic ${btoa("admin:" + ADMIN_TOKEN)}` },
    });
    await basic.body?.cancel();
    assert.equal(basic.status, 401);
  }
  // An API key is not an admin token.
  const { key } = await server.app.services.keys.create({ name: "k" });
  assert.equal((await admin(server, "GET", "/admin/keys", undefined, key)).status, 401);
  assert.equal((await admin(server, "GET", "/admin/keys")).status, 200);
});

Deno.test("admin routes are not rate limited, and the token never reaches a log", async () => {
  await using server = await startAdminServer();
  for (let i = 0; i < 30; i++) {
    const res = await admin(server, "GET", "/admin/models");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ratelimit-limit-requests"), null);
  }
  await admin(server, "GET", "/admin/keys", undefined, "wrong-token-value");
  await server.app.services.logger.flush();
  const all = server.output.out + server.output.err;
  assert.ok(all.includes("/admin/models"));
  assert.ok(!all.includes(ADMIN_TOKEN));
  assert.ok(!all.includes("wrong-token-value"));
});
