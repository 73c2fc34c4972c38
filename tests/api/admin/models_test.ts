import assert from "node:assert/strict";
import { admin, type JsonBody, startAdminServer } from "../../support/admin.ts";
import { type StartOptions, testConfig, type TestServer } from "../../support/server.ts";

async function publicIds(server: TestServer): Promise<string[]> {
  const res = await fetch(`${server.url}/v1/models`);
  return (await res.json()).data.map((m: { id: string }) => m.id);
}

const config = () =>
  testConfig((raw) => {
    (raw.providers as unknown[]).push({
      id: "openai",
      style: "openai",
      api_key_env: "OPENAI_API_KEY",
    });
    (raw.models as unknown[]).push(
      { id: "gpt-x", provider: "openai", chat_completions: true },
      { id: "sim-off", provider: "sim", chat_completions: true, enabled: false },
    );
  });

Deno.test("GET /admin/models lists every model, with disabled and unavailable ones flagged", async () => {
  await using server = await startAdminServer({ config: config() });
  const res = await admin(server, "GET", "/admin/models");
  assert.equal(res.status, 200);
  const byId = new Map<string, JsonBody>(res.body.data.map((m: JsonBody) => [m.id, m]));
  assert.deepEqual([...byId.keys()], [
    "gpt-x",
    "sim-chat",
    "sim-image",
    "sim-keyed",
    "sim-moderation",
    "sim-off",
    "sim-vision",
  ]);
  assert.deepEqual(
    [byId.get("gpt-x"), byId.get("sim-off"), byId.get("sim-chat")].map((m: JsonBody) => [
      m.enabled,
      m.available,
      m.served,
    ]),
    [[true, false, false], [false, true, false], [true, true, true]],
  );
  const one = await admin(server, "GET", "/admin/models/sim-keyed");
  assert.equal(one.status, 200);
  assert.equal(one.body.access, "key");
  assert.equal(one.body.source, "config");
  assert.equal(one.body.upstream_model, "sim-keyed");
  const missing = await admin(server, "GET", "/admin/models/nope");
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, "model_not_found");
});

Deno.test("PUT /admin/models/{id} adds and changes models; this instance serves them at once", async () => {
  await using server = await startAdminServer({ config: config() });
  const added = await admin(server, "PUT", "/admin/models/sim-new", {
    provider: "sim",
    chat_completions: true,
    labels: ["chat completions"],
  });
  assert.equal(added.status, 201);
  assert.equal(added.body.id, "sim-new");
  assert.equal(added.body.source, "admin");
  assert.equal(added.body.created, Math.floor(Date.UTC(2026, 0, 15, 12) / 1000));
  assert.equal(added.body.served, true);
  assert.ok((await publicIds(server)).includes("sim-new"));
  const changed = await admin(server, "PUT", "/admin/models/sim-new", {
    id: "sim-new",
    provider: "sim",
    chat_completions: true,
    access: "key",
  });
  assert.equal(changed.status, 200);
  assert.equal(changed.body.created, added.body.created);
  assert.ok(!(await publicIds(server)).includes("sim-new"));
  // Disabling a config model through the API hides it.
  const off = await admin(server, "PUT", "/admin/models/sim-chat", {
    provider: "sim",
    chat_completions: true,
    enabled: false,
  });
  assert.equal(off.status, 200);
  assert.ok(!(await publicIds(server)).includes("sim-chat"));
  // Ids with a slash are written with %2F.
  const slashed = await admin(server, "PUT", "/admin/models/org%2Fmodel", {
    provider: "sim",
    moderation: true,
  });
  assert.equal(slashed.status, 201);
  assert.equal(slashed.body.id, "org/model");
  assert.equal((await admin(server, "GET", "/admin/models/org%2Fmodel")).body.id, "org/model");
});

Deno.test("PUT /admin/models/{id}: the body is validated like the config, 400s name the field", async () => {
  await using server = await startAdminServer({ config: config() });
  const cases: [unknown, string][] = [
    [{ chat_completions: true }, "provider"],
    [{ provider: "nope", chat_completions: true }, "provider"],
    [{ provider: "sim", chat_completions: "yes" }, "chat_completions"],
    [{ provider: "sim" }, "(root)"],
    [{ provider: "sim", chat_completions: true, access: "secret" }, "access"],
    [{ provider: "sim", chat_completions: true, colour: "red" }, "colour"],
    [{ provider: "sim", image_generation: { sizes: ["big"] } }, "image_generation.sizes[0]"],
    [{ id: "other", provider: "sim", chat_completions: true }, "id"],
    [{ provider: "sim", moderation: true, default_moderation: true }, "default_moderation"],
  ];
  for (const [body, param] of cases) {
    const res = await admin(server, "PUT", "/admin/models/sim-x", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.param, param === "(root)" ? null : param, JSON.stringify(body));
  }
  const badId = await admin(server, "PUT", "/admin/models/bad%20id", {
    provider: "sim",
    chat_completions: true,
  });
  assert.equal(badId.status, 400);
  assert.equal(badId.body.error.param, "id");
  assert.equal((await admin(server, "GET", "/admin/models/sim-x")).status, 404);
});

Deno.test("DELETE /admin/models/{id} removes a model: 204, then 404", async () => {
  await using server = await startAdminServer({ config: config() });
  assert.equal((await admin(server, "DELETE", "/admin/models/sim-vision")).status, 204);
  assert.ok(!(await publicIds(server)).includes("sim-vision"));
  assert.equal((await admin(server, "GET", "/admin/models/sim-vision")).status, 404);
  assert.equal((await admin(server, "DELETE", "/admin/models/sim-vision")).status, 404);
});

Deno.test("a model put through one instance appears in /v1/models of another within a second", async () => {
  await twoInstances(async (a, b) => {
    const put = await admin(a, "PUT", "/admin/models/sim-late", {
      provider: "sim",
      chat_completions: true,
    });
    assert.equal(put.status, 201);
    const started = performance.now();
    while (!(await publicIds(b)).includes("sim-late")) {
      assert.ok(performance.now() - started < 5000, "the other instance never saw the model");
      await new Promise((r) => setTimeout(r, 20));
    }
    await admin(a, "DELETE", "/admin/models/sim-late");
    while ((await publicIds(b)).includes("sim-late")) {
      assert.ok(performance.now() - started < 10_000, "the other instance kept the model");
      await new Promise((r) => setTimeout(r, 20));
    }
  }, { cataloguePollMs: 100 });
});

Deno.test("PATCH /admin/models/{id} changes only the given fields and survives a restart's seeding", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    {
      await using server = await startAdminServer({ config: config(), kv });
      const before = (await admin(server, "GET", "/admin/models/sim-vision")).body;
      assert.equal(before.source, "config");
      const res = await admin(server, "PATCH", "/admin/models/sim-vision", { enabled: false });
      assert.equal(res.status, 200);
      const { source, enabled, served, config_hash, ...rest } = res.body;
      assert.deepEqual([source, enabled, served, config_hash], ["admin", false, false, undefined]);
      const { source: _s, enabled: _e, served: _v, config_hash: _h, ...kept } = before;
      assert.deepEqual(rest, kept, "every other field is kept (PUT would reset them)");
      assert.ok(!(await publicIds(server)).includes("sim-vision"));
      const labels = await admin(server, "PATCH", "/admin/models/sim-vision", {
        labels: ["vision"],
        context_length: 8192,
      });
      assert.deepEqual(
        [labels.body.labels, labels.body.context_length, labels.body.enabled],
        [["vision"], 8192, false],
      );
    }
    // A restart seeds the same config: the admin's change stays.
    await using again = await startAdminServer({ config: config(), kv });
    const after = (await admin(again, "GET", "/admin/models/sim-vision")).body;
    assert.deepEqual([after.enabled, after.labels, after.source], [false, ["vision"], "admin"]);
  } finally {
    kv.close();
  }
});

Deno.test("PATCH /admin/models/{id}: validated like PUT; 404 for an unknown model", async () => {
  await using server = await startAdminServer({ config: config() });
  const cases: [unknown, string, string][] = [
    [{ enabled: "no" }, "enabled", "invalid_type"],
    [{ provider: "nope" }, "provider", "invalid_value"],
    [{ id: "other" }, "id", "invalid_value"],
    [{ chat_completion: true }, "chat_completion", "unknown_parameter"],
    [{ chat_completions: false }, "", "invalid_value"],
    [{ default_moderation: true }, "default_moderation", "invalid_value"],
  ];
  for (const [body, param, code] of cases) {
    const res = await admin(server, "PATCH", "/admin/models/sim-chat", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.param ?? "", param, JSON.stringify(body));
    assert.equal(res.body.error.code, code, JSON.stringify(body));
  }
  const unknown = await admin(server, "PATCH", "/admin/models/nope", { enabled: false });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, "model_not_found");
  assert.equal((await admin(server, "GET", "/admin/models/sim-chat")).body.enabled, true);
});

/** Runs `fn` with two admin servers on one KV file, as two processes would share it (`b` with
 * `options`). */
async function twoInstances(
  fn: (a: TestServer, b: TestServer) => Promise<void>,
  options: StartOptions = {},
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const kvA = await Deno.openKv(`${dir}/kv.sqlite`);
    const kvB = await Deno.openKv(`${dir}/kv.sqlite`);
    try {
      await using a = await startAdminServer({ kv: kvA });
      await using b = await startAdminServer({ ...options, kv: kvB });
      await fn(a, b);
    } finally {
      kvA.close();
      kvB.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The statuses of 10 concurrent calls, alternating between `a` and `b`, sorted. */
async function tenAtOnce(
  a: TestServer,
  b: TestServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<number[]> {
  const calls = Array.from({ length: 10 }, (_, i) => admin(i % 2 ? a : b, method, path, body));
  return (await Promise.all(calls)).map((res) => res.status).sort();
}

Deno.test("concurrent PUTs of a new model, through two instances on one KV file: exactly one 201, the rest 200", async () => {
  await twoInstances(async (a, b) => {
    const body = { provider: "sim", chat_completions: true };
    assert.deepEqual(
      await tenAtOnce(a, b, "PUT", "/admin/models/sim-race", body),
      [200, 200, 200, 200, 200, 200, 200, 200, 200, 201],
    );
  });
});

Deno.test("concurrent DELETEs of a model, through two instances on one KV file: exactly one 204, the rest 404", async () => {
  await twoInstances(async (a, b) => {
    const body = { provider: "sim", chat_completions: true };
    // Several rounds: two deletes overlap in only some of them.
    for (let round = 0; round < 10; round++) {
      assert.equal((await admin(a, "PUT", "/admin/models/sim-race", body)).status, 201);
      assert.deepEqual(
        await tenAtOnce(a, b, "DELETE", "/admin/models/sim-race"),
        [204, 404, 404, 404, 404, 404, 404, 404, 404, 404],
        `round ${round}`,
      );
    }
  });
});

Deno.test("PATCH /admin/models/{id} with nothing to change is a 400, as for keys", async () => {
  await using server = await startAdminServer({ config: config() });
  const res = await admin(server, "PATCH", "/admin/models/sim-chat", {});
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, "invalid_value");
  assert.equal(res.body.error.param, null);
  assert.match(res.body.error.message, /nothing to change/);
  const key = await admin(server, "POST", "/admin/keys", { name: "k" });
  const forKey = await admin(server, "PATCH", `/admin/keys/${key.body.id}`, {});
  assert.deepEqual(
    [forKey.status, forKey.body.error.code, forKey.body.error.param],
    [res.status, res.body.error.code, res.body.error.param],
  );
  assert.equal((await admin(server, "GET", "/admin/models/sim-chat")).body.source, "config");
});

Deno.test("PATCH /admin/models/{id} switching provider and routes never drops an upstream_model silently", async () => {
  await using server = await startAdminServer({ config: config() });
  const put = await admin(server, "PUT", "/admin/models/aliased", {
    provider: "sim",
    upstream_model: "sim-upstream",
    chat_completions: true,
  });
  assert.equal(put.status, 201);
  // Routes that leave out upstream_model would serve the id: refused, naming the field.
  const bare = await admin(server, "PATCH", "/admin/models/aliased", {
    routes: [{ provider: "sim", upstream_model: "sim-upstream" }, { provider: "sim" }],
  });
  assert.equal(bare.status, 400);
  assert.equal(bare.body.error.code, "missing_required_parameter");
  assert.equal(bare.body.error.param, "routes[1].upstream_model");
  assert.match(bare.body.error.message, /"sim-upstream"/);
  assert.equal((await admin(server, "GET", "/admin/models/aliased")).body.routes, undefined);
  // Named, the routes are taken.
  const routed = await admin(server, "PATCH", "/admin/models/aliased", {
    routes: [{ provider: "sim", upstream_model: "sim-upstream" }, {
      provider: "sim",
      upstream_model: "sim-other",
    }],
  });
  assert.equal(routed.status, 200);
  assert.deepEqual(routed.body.routes.map((r: JsonBody) => r.upstream_model), [
    "sim-upstream",
    "sim-other",
  ]);
  // Back to one provider: the routes' upstream models are not dropped silently either.
  const provider = await admin(server, "PATCH", "/admin/models/aliased", { provider: "sim" });
  assert.equal(provider.status, 400);
  assert.equal(provider.body.error.param, "upstream_model");
  const single = await admin(server, "PATCH", "/admin/models/aliased", {
    provider: "sim",
    upstream_model: "sim-upstream",
  });
  assert.equal(single.status, 200);
  assert.deepEqual(
    [single.body.routes, single.body.upstream_model],
    [undefined, "sim-upstream"],
  );
  // A model whose upstream model is its id loses nothing: routes without one are fine.
  const plain = await admin(server, "PATCH", "/admin/models/sim-chat", {
    routes: [{ provider: "sim" }],
  });
  assert.equal(plain.status, 200);
  assert.equal(plain.body.routes[0].upstream_model, "sim-chat");
});
