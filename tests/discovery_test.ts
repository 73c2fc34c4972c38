/**
 * Model discovery end to end: a gateway on a real port whose providers have `discover: true`
 * over the fake OpenAI, Anthropic and Gemini upstreams, each listing its models in its own
 * wire format.
 */
import assert from "node:assert/strict";
import { admin, ADMIN_TOKEN, type JsonBody } from "./support/admin.ts";
import { eventually } from "./support/eventually.ts";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeGemini } from "./support/fake_gemini.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { fakeProviders } from "./support/gateway.ts";
import { createKey } from "./support/sdk_gateway.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

/** A gateway discovering from the three fakes: `oa/…` (access key, the default), `an/…`
 * (preview) and Gemini's under `g-` (public); plus an API key without preview. */
async function discoveringGateway() {
  const openai = startFakeOpenAI();
  const anthropic = startFakeAnthropic();
  const gemini = startFakeGemini();
  const keys: Record<string, string> = {
    OA_KEY: openai.apiKey,
    AN_KEY: anthropic.apiKey,
    GE_KEY: gemini.apiKey,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  const server = await startServer({
    config: testConfig((raw) => {
      const [oa, an, ge] = fakeProviders(openai, anthropic, { discover: true }, gemini);
      Object.assign(an!, { discover_access: "preview" });
      Object.assign(ge!, { discover_prefix: "g-", discover_access: "public" });
      (raw.providers as unknown[]).push(oa, an, ge);
    }),
    env: (name) => keys[name],
  });
  const key = await createKey(server);
  // The first listings run after start, off the request path.
  const { catalogue } = server.app.services;
  await eventually(
    () =>
      ["oa/gpt-up", "an/claude-up", "g-gemini-up"].every((id) => catalogue.get(id)) || undefined,
    "the first listings",
  );
  return {
    server,
    key,
    openai,
    anthropic,
    gemini,
    async [Symbol.asyncDispose]() {
      await server.close();
      await openai.close();
      await anthropic.close();
      await gemini.close();
    },
  };
}

async function get(server: TestServer, path: string, key: string | null): Promise<JsonBody> {
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const res = await fetch(`${server.url}${path}`, { headers });
  return { status: res.status, body: await res.json() };
}

async function chat(server: TestServer, model: string, key: string | null) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello there" }] }),
  });
  return { status: res.status, body: await res.json() };
}

const listedIds = (body: JsonBody): string[] => body.data.map((m: { id: string }) => m.id);

Deno.test("discovered models are listed under their prefix with their access; the caller sees what the access allows", async () => {
  await using g = await discoveringGateway();
  assert.deepEqual(
    [...g.openai.violations, ...g.anthropic.violations, ...g.gemini.violations],
    [],
  );
  const keyed = await get(g.server, "/v1/models", g.key);
  assert.equal(keyed.status, 200);
  const ids = listedIds(keyed.body);
  for (const id of ["oa/gpt-4o-mini", "oa/gpt-up", "g-gemini-up", "g-gemini-2.5-flash"]) {
    assert.ok(ids.includes(id), `${id} in ${ids}`);
  }
  for (const id of ["oa/text-embedding-3-small", "oa/whisper-1", "g-gemini-embedding-001"]) {
    assert.ok(!ids.includes(id), `${id} is not a chat model`);
  }
  assert.ok(!ids.some((id) => id.startsWith("an/")), "preview models need a preview key");
  const model = keyed.body.data.find((m: { id: string }) => m.id === "oa/gpt-4o-mini");
  assert.deepEqual(model, {
    id: "oa/gpt-4o-mini",
    object: "model",
    created: 1721172741,
    owned_by: "oa",
    chat_completions: true,
    moderation: false,
    image_input: false,
    function_calling: false,
    embeddings: false,
    rerank: false,
    featured: false,
    labels: [],
    access: "key",
  });
  const gem = keyed.body.data.find((m: { id: string }) => m.id === "g-gemini-2.5-flash");
  assert.equal(gem.context_length, 1048576);
  assert.equal(gem.access, "public");

  const anonymous = listedIds((await get(g.server, "/v1/models", null)).body);
  assert.ok(anonymous.includes("g-gemini-up"), "public discovered models are public");
  assert.ok(!anonymous.some((id) => id.startsWith("oa/")), "an anonymous caller sees no key model");
  const retrieve = await get(g.server, `/v1/models/${encodeURIComponent("oa/gpt-up")}`, null);
  assert.equal(retrieve.status, 404);

  const preview = await createKey(g.server, { preview: true });
  const withPreview = listedIds((await get(g.server, "/v1/models", preview)).body);
  assert.ok(
    withPreview.includes("an/claude-up") && withPreview.includes("an/claude-3-haiku-20240307"),
  );
  const claude = (await get(g.server, `/v1/models/${encodeURIComponent("an/claude-up")}`, preview))
    .body;
  assert.equal(claude.context_length, 200000);
  assert.equal(claude.image_input, true, "Anthropic states image input");
});

Deno.test("a chat completion to a discovered model reaches its upstream with the upstream's id; anonymous callers get 401 for a key model", async () => {
  await using g = await discoveringGateway();
  const answer = await chat(g.server, "oa/gpt-up", g.key);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.model, "oa/gpt-up");
  assert.equal(g.openai.last.path, "/v1/chat/completions");
  assert.equal((g.openai.last.body as JsonBody).model, "gpt-up");

  const gemini = await chat(g.server, "g-gemini-2.5-flash", null);
  assert.equal(gemini.status, 200, JSON.stringify(gemini.body));
  assert.equal(g.gemini.last.path, "/v1beta/models/gemini-2.5-flash:generateContent");

  const preview = await createKey(g.server, { preview: true });
  const claude = await chat(g.server, "an/claude-up", preview);
  assert.equal(claude.status, 200, JSON.stringify(claude.body));
  assert.equal((g.anthropic.last.body as JsonBody).model, "claude-up");
  assert.equal((await chat(g.server, "an/claude-up", g.key)).status, 403);

  const anonymous = await chat(g.server, "oa/gpt-up", null);
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.body.error.message, /requires an API key/);
  const embedding = await chat(g.server, "oa/text-embedding-3-small", g.key);
  assert.equal(embedding.status, 404);
  assert.deepEqual(
    [...g.openai.violations, ...g.anthropic.violations, ...g.gemini.violations],
    [],
  );
});

Deno.test("/admin/models marks discovered models; disabling one through the admin API hides it", async () => {
  await using g = await discoveringGateway();
  const list = await admin(g.server, "GET", "/admin/models");
  const found = list.body.data.find((m: { id: string }) => m.id === "oa/gpt-4o-mini");
  assert.equal(found.source, "discovery");
  assert.equal(found.served, true);
  const sim = list.body.data.find((m: { id: string }) => m.id === "sim-chat");
  assert.equal(sim.source, "config");

  const id = encodeURIComponent("oa/gpt-4o-mini");
  const patched = await admin(g.server, "PATCH", `/admin/models/${id}`, { enabled: false });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.source, "admin");
  assert.equal(patched.body.upstream_model, "gpt-4o-mini");
  const ids = listedIds((await get(g.server, "/v1/models", g.key)).body);
  assert.ok(!ids.includes("oa/gpt-4o-mini"));
  assert.equal((await chat(g.server, "oa/gpt-4o-mini", g.key)).status, 404);
});

Deno.test("a slow listing does not hold up start or requests; closing the app stops it", async () => {
  await using openai = startFakeOpenAI();
  openai.faults = [{ delayMs: 60_000 }];
  const server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "oa",
        style: "openai",
        base_url: `${openai.url}/v1`,
        api_key_env: "OA_KEY",
        discover: true,
      });
    }),
    env: (name) => name === "OA_KEY" ? openai.apiKey : undefined,
  });
  try {
    await eventually(() => openai.received.length > 0 || undefined, "the first listing to start");
    const models = await get(server, "/v1/models", null);
    assert.equal(models.status, 200);
    assert.ok(listedIds(models.body).includes("sim-chat"));
    assert.ok(!listedIds(models.body).some((id) => id.startsWith("oa/")));
  } finally {
    await server.close();
  }
  assert.equal(await openai.last.gone.then(() => openai.last.wentAway), true);
});
