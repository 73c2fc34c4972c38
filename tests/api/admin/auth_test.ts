import assert from "node:assert/strict";
import { ADMIN_FAILURES_PER_MINUTE } from "../../../src/auth/admin_token.ts";
import { admin, ADMIN_TOKEN, startAdminServer } from "../../support/admin.ts";
import { FakeClock, startServer, testConfig } from "../../support/server.ts";

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
  const clock = new FakeClock();
  await using server = await startAdminServer({ clock });
  for (const [method, path] of PATHS) {
    clock.advance(60_000); // a fresh minute: failed attempts per IP are limited (tested below)
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

Deno.test("failed admin authentications are limited per IP: 429 with retry-after, even for the right token", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 15, 12, 0, 15));
  await using server = await startAdminServer({
    clock,
    config: testConfig((
      raw,
    ) => (raw.server = { port: 0, hostname: "127.0.0.1", trust_proxy: true })),
  });
  const from = (ip: string, token: string | null) =>
    fetch(`${server.url}/admin/keys`, {
      headers: { "x-forwarded-for": ip, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }));
  // No token at all is not a guess and is not counted.
  assert.equal((await from("203.0.113.7", null)).status, 401);
  for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) {
    assert.equal((await from("203.0.113.7", `guess-${i}`)).status, 401);
  }
  for (const token of ["guess-x", ADMIN_TOKEN, null]) {
    const res = await from("203.0.113.7", token);
    assert.equal(res.status, 429, String(token));
    assert.equal(res.headers.get("retry-after"), "45");
    assert.equal(res.body.error.code, "rate_limit_exceeded");
    assert.match(res.body.error.message, /failed admin authentications/);
  }
  assert.equal((await from("203.0.113.8", ADMIN_TOKEN)).status, 200, "another IP is not blocked");
  clock.advance(45_000);
  assert.equal((await from("203.0.113.7", ADMIN_TOKEN)).status, 200, "the next minute");
});

Deno.test("concurrent wrong tokens are counted exactly: exactly the allowance gets 401", async () => {
  await using server = await startAdminServer({ clock: new FakeClock() });
  const statuses = await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) =>
        admin(server, "GET", "/admin/models", undefined, `wrong-${i}`).then((r) => r.status),
    ),
  );
  assert.equal(statuses.filter((s) => s === 401).length, ADMIN_FAILURES_PER_MINUTE);
  assert.equal(statuses.filter((s) => s === 429).length, 40 - ADMIN_FAILURES_PER_MINUTE);
});

Deno.test("an admin token shorter than 32 characters stops the app from being built", async () => {
  await assert.rejects(
    startAdminServer({ env: (name) => name === "SWITCHYARD_ADMIN_TOKEN" ? "a" : undefined }),
    /SWITCHYARD_ADMIN_TOKEN: must be at least 32 characters, not 1/,
  );
});
