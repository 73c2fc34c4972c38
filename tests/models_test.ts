import assert from "node:assert/strict";
import { openaiClient } from "./support/client.ts";
import { startServer, testConfig } from "./support/server.ts";

const MODEL_FIELDS: [string, string][] = [
  ["id", "string"],
  ["object", "string"],
  ["created", "number"],
  ["owned_by", "string"],
  ["chat_completions", "boolean"],
  ["moderation", "boolean"],
  ["image_input", "boolean"],
  ["function_calling", "boolean"],
];

async function list(url: string, key?: string): Promise<Record<string, unknown>[]> {
  const headers: HeadersInit = key ? { authorization: `Bearer ${key}` } : {};
  const res = await fetch(`${url}/v1/models`, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  const body = await res.json();
  assert.equal(body.object, "list");
  assert.ok(Array.isArray(body.data));
  return body.data;
}

Deno.test("GET /v1/models: every model has the spec's eight fields with their types", async () => {
  await using server = await startServer();
  const models = await list(server.url);
  assert.ok(models.length > 0);
  for (const model of models) {
    for (const [field, type] of MODEL_FIELDS) {
      assert.equal(typeof model[field], type, `${model.id}.${field} should be a ${type}`);
    }
    assert.equal(model.object, "model");
    assert.ok(Number.isInteger(model.created));
    assert.equal(model.created, Math.floor(server.clock.now() / 1000));
  }
  const moderation = models.find((m) => m.id === "sim-moderation")!;
  assert.equal(moderation.moderation, true);
  assert.equal(moderation.chat_completions, false);
  assert.equal(moderation.default_moderation, true);
  const vision = models.find((m) => m.id === "sim-vision")!;
  assert.equal(vision.image_input, true);
  assert.equal(vision.function_calling, true);
  assert.deepEqual(vision.labels, ["chat completions", "multimodal", "function calling"]);
  assert.equal(vision.featured, true);
});

Deno.test("GET /v1/models: anonymous callers see public models only", async () => {
  await using server = await startServer();
  const ids = (await list(server.url)).map((m) => m.id);
  assert.deepEqual(ids.sort(), ["sim-chat", "sim-moderation", "sim-vision"]);
});

Deno.test("GET /v1/models: a key sees key models; preview only with preview; allow-lists filter", async () => {
  await using server = await startServer();
  const keys = server.app.services.keys;
  const plain = await keys.create({ name: "plain" });
  const preview = await keys.create({ name: "preview", preview: true });
  const narrow = await keys.create({
    name: "narrow",
    models: ["sim-c*", "sim-image"],
    preview: true,
  });
  const ids = async (key: string) => (await list(server.url, key)).map((m) => m.id).sort();
  assert.deepEqual(await ids(plain.key), ["sim-chat", "sim-keyed", "sim-moderation", "sim-vision"]);
  assert.deepEqual(await ids(preview.key), [
    "sim-chat",
    "sim-image",
    "sim-keyed",
    "sim-moderation",
    "sim-vision",
  ]);
  assert.deepEqual(await ids(narrow.key), ["sim-chat", "sim-image"]);
  const image = (await list(server.url, preview.key)).find((m) => m.id === "sim-image")!;
  assert.deepEqual(image.image_generation, {
    sizes: ["1024x1024", "1024x1792", "1792x1024"],
    max_n: 4,
    guidance_scale: true,
    num_inference_steps: true,
  });
});

Deno.test("GET /v1/models: models of a provider without its key are not listed", async () => {
  const config = testConfig((raw) => {
    (raw.providers as unknown[]).push({
      id: "openai",
      style: "openai",
      base_url: "http://127.0.0.1:9/v1",
      api_key_env: "TEST_OPENAI_KEY",
    });
    (raw.models as unknown[]).push({ id: "gpt-x", provider: "openai", chat_completions: true });
  });
  {
    await using server = await startServer({ config, env: () => undefined });
    const ids = (await list(server.url)).map((m) => m.id);
    assert.ok(!ids.includes("gpt-x"));
    assert.match(server.output.err, /provider \\"openai\\" disabled: TEST_OPENAI_KEY is not set/);
  }
  {
    await using server = await startServer({
      config,
      env: (n) => (n === "TEST_OPENAI_KEY" ? "sk-test" : undefined),
    });
    const ids = (await list(server.url)).map((m) => m.id);
    assert.ok(ids.includes("gpt-x"));
    assert.equal(server.output.err, "");
  }
});

Deno.test("GET /v1/models: a disabled model is not listed", async () => {
  const config = testConfig((raw) => {
    (raw.models as Record<string, unknown>[])[0]!.enabled = false;
  });
  await using server = await startServer({ config });
  const ids = (await list(server.url)).map((m) => m.id);
  assert.ok(!ids.includes("sim-chat"));
});

Deno.test("GET /v1/models/{id}: the model object under the list's rules, else 404 model_not_found", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[]).push(
        { id: "org/slashed", provider: "sim", chat_completions: true },
        { id: "sim-off", provider: "sim", chat_completions: true, enabled: false },
      );
    }),
  });
  const client = openaiClient(server);
  const listed = (await list(server.url)).find((m) => m.id === "sim-vision");
  const model = await client.models.retrieve("sim-vision");
  assert.deepEqual({ ...model }, listed);
  assert.equal((await client.models.retrieve("org/slashed")).id, "org/slashed", "ids with a slash");

  const notFound = async (id: string, key?: string) => {
    const headers: HeadersInit = key ? { authorization: `Bearer ${key}` } : {};
    const res = await fetch(`${server.url}/v1/models/${encodeURIComponent(id)}`, { headers });
    assert.equal(res.status, 404, id);
    const body = await res.json();
    assert.deepEqual(
      [body.error.type, body.error.code, body.error.param],
      ["invalid_request_error", "model_not_found", "model"],
    );
    assert.match(body.error.message, new RegExp(`\`${id}\` does not exist`));
  };
  await notFound("no-such-model");
  await notFound("sim-off");
  await notFound("sim-keyed", undefined);
  await notFound("sim-image", undefined);
  const keys = server.app.services.keys;
  const plain = await keys.create({ name: "plain" });
  const narrow = await keys.create({ name: "narrow", models: ["sim-c*"] });
  const keyed = await fetch(`${server.url}/v1/models/sim-keyed`, {
    headers: { authorization: `Bearer ${plain.key}` },
  });
  assert.equal((await keyed.json()).id, "sim-keyed");
  await notFound("sim-image", plain.key);
  await notFound("sim-vision", narrow.key);
  const wrongMethod = await fetch(`${server.url}/v1/models/sim-chat`, { method: "DELETE" });
  assert.equal(wrongMethod.status, 405);
  await wrongMethod.body?.cancel();
});

Deno.test("GET /v1/models and /v1/models/{id}: errors in Anthropic's shape for a request with anthropic-version", async () => {
  await using server = await startServer();
  const get = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(`${server.url}${path}`, { headers });
    return { status: res.status, body: await res.json() };
  };
  const anthropic = { "anthropic-version": "2023-06-01" };
  const missing = await get("/v1/models/no-such-model", anthropic);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.type, "error");
  assert.equal(missing.body.error.type, "not_found_error");
  assert.match(missing.body.error.message, /no-such-model/);
  const badKey = await get("/v1/models", { ...anthropic, "x-api-key": "sk-sy-not-a-key" });
  assert.equal(badKey.status, 401);
  assert.equal(badKey.body.error.type, "authentication_error");
  assert.equal(badKey.body.type, "error");
  const openai = await get("/v1/models/no-such-model", {});
  assert.equal(openai.status, 404);
  assert.equal(openai.body.error.code, "model_not_found");
  assert.equal(openai.body.type, undefined);
});
