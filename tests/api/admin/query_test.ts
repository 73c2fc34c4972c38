import assert from "node:assert/strict";
import { admin, ADMIN_TOKEN, startAdminServer } from "../../support/admin.ts";

Deno.test("every admin endpoint without query parameters refuses one (unknown_parameter) and does nothing", async () => {
  await using server = await startAdminServer();
  const { body: key } = await admin(server, "POST", "/admin/keys", { name: "kept" });
  const model = { provider: "sim", chat_completions: true };
  const cases: [string, string, unknown?][] = [
    ["GET", "/admin/keys"],
    ["POST", "/admin/keys", { name: "new" }],
    ["GET", `/admin/keys/${key.id}`],
    ["PATCH", `/admin/keys/${key.id}`, { name: "renamed" }],
    ["DELETE", `/admin/keys/${key.id}`],
    ["GET", "/admin/models"],
    ["GET", "/admin/models/sim-chat"],
    ["PUT", "/admin/models/sim-new", model],
    ["PATCH", "/admin/models/sim-chat", { enabled: false }],
    ["DELETE", "/admin/models/sim-chat"],
    ["GET", "/admin/routes"],
  ];
  for (const [method, path, body] of cases) {
    for (const query of ["x=1", "x=1&x=2", "x"]) {
      const res = await admin(server, method, `${path}?${query}`, body);
      const what = `${method} ${path}?${query}`;
      assert.equal(res.status, 400, what);
      assert.equal(res.body.error.code, "unknown_parameter", what);
      assert.equal(res.body.error.param, "x", what);
      assert.equal(res.body.error.message, "Unknown parameter: 'x'.", what);
    }
  }
  // Nothing was created, changed or deleted.
  const keys = (await admin(server, "GET", "/admin/keys")).body.data;
  assert.deepEqual(keys.map((k: { name: string }) => k.name), ["kept"]);
  assert.equal((await admin(server, "GET", "/admin/models/sim-chat")).body.enabled, true);
  assert.equal((await admin(server, "GET", "/admin/models/sim-new")).status, 404);
  // Without one, they answer as usual.
  assert.equal((await admin(server, "GET", "/admin/routes")).status, 200);
  assert.equal((await admin(server, "GET", `/admin/keys/${key.id}`)).status, 200);
});

Deno.test("a query parameter given twice is a 400 naming it; an unknown one given twice is unknown", async () => {
  await using server = await startAdminServer();
  const cases: [string, string, string][] = [
    ["/admin/logs?limit=1&limit=2", "limit", "invalid_value"],
    ["/admin/logs?follow=0&follow=1", "follow", "invalid_value"],
    ["/admin/logs?model=a&path=/v1/models&model=b", "model", "invalid_value"],
    ["/admin/usage?day=2026-01-15&day=2026-01-16", "day", "invalid_value"],
    ["/admin/logs?sort=a&sort=b", "sort", "unknown_parameter"],
  ];
  for (const [path, param, code] of cases) {
    const res = await admin(server, "GET", path);
    assert.equal(res.status, 400, path);
    assert.equal(res.body.error.param, param, path);
    assert.equal(res.body.error.code, code, path);
  }
  const twice = await admin(server, "GET", "/admin/logs?limit=1&limit=2");
  assert.equal(
    twice.body.error.message,
    "Invalid value for 'limit': expected one value, but got 2.",
  );
});

Deno.test("GET /admin/logs: follow takes 1, 0, true or false, as its error says", async () => {
  await using server = await startAdminServer();
  const wrong = await admin(server, "GET", "/admin/logs?follow=2");
  assert.equal(wrong.status, 400);
  assert.equal(
    wrong.body.error.message,
    `Invalid value for 'follow': expected 1, 0, true or false, but got "2".`,
  );
  for (const value of ["0", "false"]) {
    const listed = await admin(server, "GET", `/admin/logs?follow=${value}`);
    assert.equal(listed.status, 200, value);
    assert.equal(listed.body.object, "list", value);
  }
  // A client of its own, closed at the end, so that the followers' connections surely close.
  using client = Deno.createHttpClient({});
  for (const value of ["1", "true"]) {
    const res = await fetch(`${server.url}/admin/logs?follow=${value}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      client,
    });
    await res.body?.cancel();
    assert.equal(res.status, 200, value);
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8", value);
  }
});
