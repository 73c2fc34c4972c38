/** Spec §5 (authentication), row by row, over a real port. */
import assert from "node:assert/strict";
import { viewerOf } from "../src/auth/principal.ts";
import { resolveModel } from "../src/catalogue/access.ts";
import { ApiError } from "../src/errors.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

const CHAT_BODY = JSON.stringify({
  model: "sim-chat",
  messages: [{ role: "user", content: "hi" }],
});
const ENDPOINTS = [
  ["GET", "/v1/models", undefined],
  ["POST", "/v1/chat/completions", CHAT_BODY],
  ["POST", "/v1/moderations", JSON.stringify({ input: "hi" })],
  [
    "POST",
    "/v1/images/generations",
    JSON.stringify({ model: "sim-image-public", prompt: "a cat" }),
  ],
] as const;

function call(
  server: TestServer,
  [method, path, body]: readonly [string, string, string | undefined],
  authorization?: string,
) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${server.url}${path}`, { method, headers, ...(body ? { body } : {}) });
}

async function modelIds(server: TestServer, authorization?: string): Promise<string[]> {
  const res = await call(server, ENDPOINTS[0], authorization);
  assert.equal(res.status, 200);
  const body = await res.json();
  return body.data.map((m: { id: string }) => m.id).sort();
}

async function expect401(res: Response, message: RegExp): Promise<void> {
  assert.equal(res.status, 401);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  const body = await res.json();
  assert.equal(body.error.type, "authentication_error");
  assert.equal(body.error.code, "invalid_api_key");
  assert.match(body.error.message, message);
}

Deno.test("§5.1: authentication is optional on every endpoint", async () => {
  // The default image model is preview-only; the endpoint itself needs no key.
  const config = testConfig((raw) => {
    (raw.models as unknown[]).push({
      id: "sim-image-public",
      provider: "sim",
      image_generation: { sizes: ["1024x1024"] },
    });
  });
  await using server = await startServer({ config });
  for (const endpoint of ENDPOINTS) {
    const res = await call(server, endpoint);
    await res.body?.cancel();
    assert.notEqual(res.status, 401, endpoint[1]);
    assert.notEqual(res.status, 403, endpoint[1]);
  }
  const { key } = await server.app.services.keys.create({ name: "k" });
  for (const endpoint of ENDPOINTS) {
    const res = await call(server, endpoint, `Bearer ${key}`);
    await res.body?.cancel();
    assert.notEqual(res.status, 401, endpoint[1]);
  }
});

Deno.test("§5.2: a key sees more models and gets higher limits than anonymous callers", async () => {
  await using server = await startServer();
  const { keys } = server.app.services;
  const plain = await keys.create({ name: "plain" });
  const preview = await keys.create({ name: "preview", preview: true });
  assert.deepEqual(await modelIds(server), ["sim-chat", "sim-moderation", "sim-vision"]);
  assert.deepEqual(await modelIds(server, `Bearer ${plain.key}`), [
    "sim-chat",
    "sim-keyed",
    "sim-moderation",
    "sim-vision",
  ]);
  assert.deepEqual(await modelIds(server, `Bearer ${preview.key}`), [
    "sim-chat",
    "sim-image",
    "sim-keyed",
    "sim-moderation",
    "sim-vision",
  ]);
  const anon = await call(server, ENDPOINTS[1]);
  await anon.body?.cancel();
  assert.equal(anon.headers.get("x-ratelimit-limit-requests"), "10");
  const keyed = await call(server, ENDPOINTS[1], `Bearer ${plain.key}`);
  await keyed.body?.cancel();
  assert.equal(keyed.headers.get("x-ratelimit-limit-requests"), "60");
});

Deno.test("§5.3: public models are usable without a key; `key` models need one", async () => {
  await using server = await startServer();
  const { catalogue, providers, keys } = server.app.services;
  const anonymous = viewerOf({ kind: "anonymous" });
  assert.equal(resolveModel(catalogue, providers, "sim-chat", anonymous).id, "sim-chat");
  assert.throws(
    () => resolveModel(catalogue, providers, "sim-keyed", anonymous),
    (e) => e instanceof ApiError && e.status === 401 && e.code === "invalid_api_key",
  );
  const { record } = await keys.create({ name: "k" });
  const keyed = viewerOf({ kind: "key", key: record });
  assert.equal(resolveModel(catalogue, providers, "sim-keyed", keyed).id, "sim-keyed");
});

Deno.test("§5.4: a malformed, unknown, revoked or disabled key is a 401 on every endpoint", async () => {
  await using server = await startServer();
  const { keys } = server.app.services;
  const revoked = await keys.create({ name: "revoked" });
  const disabled = await keys.create({ name: "disabled" });
  // Used once, so this process holds their records: revocation must still win.
  for (const { key } of [revoked, disabled]) {
    assert.equal((await call(server, ENDPOINTS[0], `Bearer ${key}`)).status, 200);
  }
  await keys.revoke(revoked.record.id);
  await keys.update(disabled.record.id, { disabled: true });
  const cases: [string, RegExp][] = [
    ["Basic dXNlcjpwYXNz", /Malformed Authorization header/],
    ["Bearer", /Malformed/],
    ["Bearer a b", /Malformed/],
    ["sk-sy-" + "a".repeat(32), /Malformed/],
    ["Bearer sk-sy-" + "a".repeat(32), /Incorrect API key/],
    ["Bearer sk-proj-abc", /Incorrect API key/],
    [`Bearer ${revoked.key}`, /Incorrect API key/],
    [`Bearer ${disabled.key}`, /disabled/],
  ];
  for (const endpoint of ENDPOINTS) {
    for (const [header, message] of cases) {
      await expect401(await call(server, endpoint, header), message);
    }
  }
  // Re-enabled, the key works again at once.
  await keys.update(disabled.record.id, { disabled: false });
  assert.equal((await call(server, ENDPOINTS[0], `Bearer ${disabled.key}`)).status, 200);
  // No key ever reaches a log line.
  await server.app.services.logger.flush();
  for (const { key } of [revoked, disabled]) {
    assert.ok(!server.output.out.includes(key) && !server.output.err.includes(key));
  }
});

Deno.test("§5.4: a model outside the key's allow-list is 403 and not listed; preview needs preview", async () => {
  await using server = await startServer();
  const { catalogue, providers, keys } = server.app.services;
  const limited = await keys.create({ name: "limited", models: ["sim-c*", "sim-keyed"] });
  assert.deepEqual(await modelIds(server, `Bearer ${limited.key}`), ["sim-chat", "sim-keyed"]);
  const viewer = viewerOf({ kind: "key", key: limited.record });
  assert.equal(resolveModel(catalogue, providers, "sim-chat", viewer).id, "sim-chat");
  for (const id of ["sim-vision", "sim-moderation"]) {
    assert.throws(
      () => resolveModel(catalogue, providers, id, viewer),
      (e) =>
        e instanceof ApiError && e.status === 403 && e.type === "permission_error" &&
        e.code === "model_not_permitted" && e.param === "model",
    );
  }
  const noPreview = viewerOf({ kind: "key", key: (await keys.create({ name: "n" })).record });
  assert.throws(
    () => resolveModel(catalogue, providers, "sim-image", noPreview),
    (e) => e instanceof ApiError && e.status === 403,
  );
  // Unknown stays 404 whoever asks.
  assert.throws(
    () => resolveModel(catalogue, providers, "nope", viewer),
    (e) => e instanceof ApiError && e.status === 404 && e.code === "model_not_found",
  );
  // Changing the allow-list takes effect on the next request.
  await keys.update(limited.record.id, { models: ["sim-vision"] });
  assert.deepEqual(await modelIds(server, `Bearer ${limited.key}`), ["sim-vision"]);
});
