import assert from "node:assert/strict";
import { admin, startAdminServer } from "../../support/admin.ts";
import { eventually } from "../../support/eventually.ts";
import type { TestServer } from "../../support/server.ts";

async function models(server: TestServer, key: string): Promise<{ status: number; ids: string[] }> {
  const res = await fetch(`${server.url}/v1/models`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = await res.json();
  return { status: res.status, ids: res.ok ? body.data.map((m: { id: string }) => m.id) : [] };
}

Deno.test("POST /admin/keys creates a key and shows it once", async () => {
  await using server = await startAdminServer();
  const created = await admin(server, "POST", "/admin/keys", {
    name: "ci",
    models: ["sim-chat", "sim-k*"],
    limits: { chat: { per_minute: 5 } },
  });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body), [
    "id",
    "key",
    "name",
    "created",
    "last_used",
    "disabled",
    "models",
    "preview",
    "limits",
    "max_concurrent",
    "budget",
    "cache",
  ]);
  assert.match(created.body.id, /^key_/);
  assert.match(created.body.key, /^sk-sy-[0-9A-Za-z]{32}$/);
  assert.equal(created.body.created, "2026-01-15T12:00:00.000Z");
  assert.equal(created.body.preview, false);
  assert.deepEqual((await models(server, created.body.key)).ids, ["sim-chat", "sim-keyed"]);
  const chat = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${created.body.key}`, "content-type": "application/json" },
    body: "{}",
  });
  await chat.body?.cancel();
  assert.equal(chat.headers.get("x-ratelimit-limit-requests"), "5");

  // The chat request recorded the key's last use, off the request path.
  const listed = await eventually(async () => {
    const res = await admin(server, "GET", "/admin/keys");
    return res.body.data[0]?.last_used === null ? undefined : res;
  }, "last_used");
  assert.equal(listed.status, 200);
  assert.equal(listed.body.data.length, 1);
  const { key: _, ...view } = created.body;
  assert.equal(listed.body.data[0].last_used, "2026-01-15T12:00:00.000Z");
  assert.deepEqual({ ...listed.body.data[0], last_used: null }, view);
  const text = JSON.stringify(listed.body);
  assert.ok(!text.includes(created.body.key) && !text.includes("hash"));
  const one = await admin(server, "GET", `/admin/keys/${created.body.id}`);
  assert.deepEqual(one.body, listed.body.data[0]);
  await server.app.services.logger.flush();
  assert.ok(!(server.output.out + server.output.err).includes(created.body.key));
});

Deno.test("POST /admin/keys: 400s name the field", async () => {
  await using server = await startAdminServer();
  const cases: [unknown, string | null][] = [
    [{}, "name"],
    [{ name: 5 }, "name"],
    [{ name: "a", models: "sim-chat" }, "models"],
    [{ name: "a", models: ["sim-chat", ""] }, "models[1]"],
    [{ name: "a", preview: "yes" }, "preview"],
    [{ name: "a", limits: { chat: { per_minute: -1 } } }, "limits.chat.per_minute"],
    [{ name: "a", limits: { chat: { per_day: 1.5 } } }, "limits.chat.per_day"],
    [{ name: "a", limits: { embeddings: {} } }, "limits.embeddings"],
    [{ name: "a", disabled: true }, "disabled"],
    [{ name: "a", id: "key_mine" }, "id"],
  ];
  for (const [body, param] of cases) {
    const res = await admin(server, "POST", "/admin/keys", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.type, "invalid_request_error");
    assert.equal(res.body.error.param, param, JSON.stringify(body));
    assert.equal(typeof res.body.error.code, "string", res.body.error.message);
    assert.ok(res.body.error.message.includes(`'${param}'`), res.body.error.message);
  }
  const broken = await admin(server, "POST", "/admin/keys", "{oops");
  assert.equal(broken.status, 400);
  assert.equal(broken.body.error.code, "invalid_json");
  assert.equal((await admin(server, "GET", "/admin/keys")).body.data.length, 0);
});

Deno.test("PATCH /admin/keys/{id} changes name, models, preview, limits and disabled", async () => {
  await using server = await startAdminServer();
  const { body: created } = await admin(server, "POST", "/admin/keys", { name: "a" });
  const path = `/admin/keys/${created.id}`;
  const renamed = await admin(server, "PATCH", path, { name: "b", preview: true });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.name, "b");
  assert.equal(renamed.body.preview, true);
  assert.ok((await models(server, created.key)).ids.includes("sim-image"));
  await admin(server, "PATCH", path, { models: ["sim-vision"] });
  assert.deepEqual((await models(server, created.key)).ids, ["sim-vision"]);
  // Two /v1/models requests so far today; a limit of 3 a day admits one more.
  await admin(server, "PATCH", path, { models: null, limits: { other: { per_day: 3 } } });
  assert.equal((await models(server, created.key)).status, 200);
  assert.equal((await models(server, created.key)).status, 429);
  await admin(server, "PATCH", path, { limits: {} });
  assert.equal((await models(server, created.key)).status, 200);
  const disabled = await admin(server, "PATCH", path, { disabled: true });
  assert.equal(disabled.body.disabled, true);
  assert.equal((await models(server, created.key)).status, 401);
  await admin(server, "PATCH", path, { disabled: false });
  assert.equal((await models(server, created.key)).status, 200);

  const empty = await admin(server, "PATCH", path, {});
  assert.equal(empty.status, 400);
  assert.match(empty.body.error.message, /nothing to change/);
  const bad = await admin(server, "PATCH", path, { disabled: "no" });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, "disabled");
  const missing = await admin(server, "PATCH", "/admin/keys/key_nope", { name: "x" });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, "key_not_found");
  assert.equal((await admin(server, "GET", "/admin/keys/key_nope")).status, 404);
});

Deno.test("DELETE /admin/keys/{id} revokes at once: 204, then the key is a 401", async () => {
  await using server = await startAdminServer();
  const { body: created } = await admin(server, "POST", "/admin/keys", { name: "a" });
  assert.equal((await models(server, created.key)).status, 200);
  const revoked = await admin(server, "DELETE", `/admin/keys/${created.id}`);
  assert.equal(revoked.status, 204);
  assert.equal(revoked.body, null);
  assert.equal((await models(server, created.key)).status, 401);
  assert.equal((await admin(server, "DELETE", `/admin/keys/${created.id}`)).status, 404);
  assert.deepEqual((await admin(server, "GET", "/admin/keys")).body.data, []);
});

Deno.test("admin input that could not fit KV is refused with a 4xx, never a 500", async () => {
  await using server = await startAdminServer();
  const longId = `key_${"a".repeat(2040)}`;
  for (const method of ["GET", "DELETE"]) {
    assert.equal((await admin(server, method, `/admin/keys/${longId}`)).status, 404, method);
  }
  assert.equal((await admin(server, "PATCH", `/admin/keys/${longId}`, { name: "k" })).status, 404);
  assert.equal((await admin(server, "DELETE", `/admin/models/${"m".repeat(2040)}`)).status, 404);
  const tooMany = await admin(server, "POST", "/admin/keys", {
    name: "k",
    models: new Array(257).fill("sim-chat"),
  });
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.error.param, "models");
  const huge = await admin(server, "PUT", "/admin/models/m", {
    provider: "sim",
    chat_completions: true,
    owned_by: "a".repeat(65_400),
  });
  assert.equal(huge.status, 400);
  assert.equal(huge.body.error.param, "owned_by");
  assert.ok(huge.body.error.message.length < 200);
});

Deno.test("POST and PATCH /admin/keys warn about model patterns that match nothing in the catalogue", async () => {
  await using server = await startAdminServer();
  const created = await admin(server, "POST", "/admin/keys", {
    name: "typo",
    models: ["sim-chatt", "sim-*", "gpt-*"],
  });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.warnings, [
    'models: "sim-chatt" matches no model in the catalogue',
    'models: "gpt-*" matches no model in the catalogue',
  ]);
  assert.deepEqual(created.body.models, ["sim-chatt", "sim-*", "gpt-*"], "kept: it may come later");
  const fixed = await admin(server, "PATCH", `/admin/keys/${created.body.id}`, {
    models: ["sim-chat"],
  });
  assert.equal(fixed.status, 200);
  assert.equal(fixed.body.warnings, undefined);
  const renamed = await admin(server, "PATCH", `/admin/keys/${created.body.id}`, { name: "x" });
  assert.equal(renamed.body.warnings, undefined);
  const all = await admin(server, "POST", "/admin/keys", { name: "all", models: null });
  assert.equal(all.body.warnings, undefined);
});

Deno.test("POST /admin/keys: a model pattern over 128 characters is refused with the limit in the message", async () => {
  await using server = await startAdminServer();
  const longest = await admin(server, "POST", "/admin/keys", {
    name: "x",
    models: ["a".repeat(127) + "*"],
  });
  assert.equal(longest.status, 201, "128 characters are fine");
  const res = await admin(server, "POST", "/admin/keys", { name: "x", models: ["a".repeat(129)] });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.param, "models[0]");
  assert.equal(
    res.body.error.message,
    "Invalid value for 'models[0]': expected at most 128 characters, but got 129.",
  );
});

Deno.test("POST and PATCH /admin/keys warn about an empty models list as about a pattern that matches nothing", async () => {
  await using server = await startAdminServer();
  const warning = "models: [] allows no model, so the key can use none";
  const created = await admin(server, "POST", "/admin/keys", { name: "none", models: [] });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.models, [], "kept, as a pattern that matches nothing is");
  assert.deepEqual(created.body.warnings, [warning]);
  const all = await admin(server, "PATCH", `/admin/keys/${created.body.id}`, { models: null });
  assert.equal(all.body.warnings, undefined);
  const emptied = await admin(server, "PATCH", `/admin/keys/${created.body.id}`, { models: [] });
  assert.equal(emptied.status, 200);
  assert.deepEqual(emptied.body.warnings, [warning]);
});
