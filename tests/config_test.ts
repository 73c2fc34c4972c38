import assert from "node:assert/strict";
import { applyEnv, configPath, loadConfig } from "../src/config/load.ts";
import { ConfigError } from "../src/config/error.ts";
import { parseConfig } from "../src/config/parse.ts";

const SIM = { id: "sim", style: "simulator" };
const CHAT = { id: "m", provider: "sim", chat_completions: true };

function base(): Record<string, unknown> {
  return { providers: [SIM], models: [CHAT] };
}

function configError(raw: unknown): string {
  try {
    parseConfig(raw, "switchyard.json");
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${e}`);
    return e.message;
  }
  assert.fail("the config was accepted");
}

Deno.test("kv.path null keeps Deno's default location (Deno Deploy's KV)", () => {
  assert.equal(parseConfig({ ...base(), kv: { path: null } }, "switchyard.json").kv.path, null);
});

Deno.test("a minimal config gets every default", () => {
  const config = parseConfig(base(), "switchyard.json");
  assert.equal(config.server.port, 8000);
  assert.equal(config.server.hostname, "0.0.0.0");
  assert.equal(config.server.trust_proxy, 0);
  assert.equal(config.server.max_body_bytes, 20 * 1024 * 1024);
  assert.deepEqual(config.server.cors_origins, ["*"]);
  assert.equal(config.kv.path, "data/switchyard.kv");
  assert.deepEqual(config.limits.anonymous.chat, { per_minute: 10, per_day: 500 });
  assert.deepEqual(config.limits.anonymous.other, { per_minute: null, per_day: 50_000 });
  assert.equal(config.logs.retention_days, 7);
  const model = config.models[0]!;
  assert.equal(model.upstream_model, "m");
  assert.equal(model.owned_by, "sim");
  assert.equal(model.access, "public");
  assert.equal(model.moderation, false);
});

Deno.test("each kind of config error names the file and the field path", () => {
  const cases: [string, (raw: Record<string, unknown>) => void, string][] = [
    [
      "unknown provider",
      (r) => (r.models = [CHAT, { id: "x", provider: "opnai", chat_completions: true }]),
      'switchyard.json: models[1].provider: unknown provider "opnai" (known: "sim")',
    ],
    [
      "unknown provider style",
      (r) => (r.providers = [SIM, { id: "v", style: "vertex" }]),
      'switchyard.json: providers[1].style: expected "openai", "anthropic", "gemini" or "simulator", but got "vertex"',
    ],
    [
      "duplicate model id",
      (r) => (r.models = [CHAT, { ...CHAT }]),
      'switchyard.json: models[1].id: duplicate model id "m" (also models[0])',
    ],
    [
      "duplicate provider id",
      (r) => (r.providers = [SIM, SIM]),
      'switchyard.json: providers[1].id: duplicate provider id "sim"',
    ],
    [
      "capability the style cannot serve",
      (r) => {
        r.providers = [SIM, { id: "a", style: "anthropic", api_key_env: "K" }];
        r.models = [CHAT, { id: "img", provider: "a", image_generation: { sizes: ["512x512"] } }];
      },
      'switchyard.json: models[1].image_generation: provider "a" (style anthropic) cannot generate images',
    ],
    [
      "malformed size",
      (
        r,
      ) => (r.models = [CHAT, {
        id: "i",
        provider: "sim",
        image_generation: { sizes: ["1024*1024"] },
      }]),
      'switchyard.json: models[1].image_generation.sizes[0]: expected WIDTHxHEIGHT with 16–8192 pixels a side, like "1024x1024", but got "1024*1024"',
    ],
    [
      "non-positive limit",
      (r) => (r.limits = { anonymous: { chat: { per_minute: 0 } } }),
      "switchyard.json: limits.anonymous.chat.per_minute: expected an integer of at least 1, but got 0",
    ],
    [
      "negative body limit",
      (r) => (r.server = { max_body_bytes: -5 }),
      "switchyard.json: server.max_body_bytes: expected an integer of at least 1, but got -5",
    ],
    [
      "unknown key (typo) at the top",
      (r) => (r.modles = []),
      "switchyard.json: modles: unknown parameter",
    ],
    [
      "unknown key (typo) in a model",
      (r) => (r.models = [{ ...CHAT, chat_completion: true }]),
      'switchyard.json: models[0].chat_completion: unknown field; did you mean "chat_completions"?',
    ],
    [
      "wrong type",
      (r) => (r.models = [{ ...CHAT, image_input: "yes" }]),
      "switchyard.json: models[0].image_input: expected a boolean, but got a string",
    ],
    [
      "missing required field",
      (r) => (r.models = [{ provider: "sim", chat_completions: true }]),
      "switchyard.json: models[0].id: missing required parameter",
    ],
    [
      "a misspelt capability is named as unknown, with the closest known field",
      (r) => (r.models = [{ id: "sim-reasoning", provider: "sim", chat_completion: true }]),
      'switchyard.json: models[0].chat_completion: unknown field; did you mean "chat_completions"?',
    ],
    [
      "an unknown field far from any known one",
      (r) => (r.models = [{ ...CHAT, colour: "red" }]),
      "switchyard.json: models[0].colour: unknown parameter",
    ],
    [
      "trust_proxy neither a boolean nor a hop count",
      (r) => (r.server = { trust_proxy: "yes" }),
      "switchyard.json: server.trust_proxy: expected true, false or a number of hops (1–32), but got a string",
    ],
    [
      "a model that serves nothing",
      (r) => (r.models = [{ id: "x", provider: "sim" }]),
      'switchyard.json: models[0]: model "x" serves nothing',
    ],
    [
      "two default moderation models",
      (r) => (r.models = [
        { id: "a", provider: "sim", moderation: true, default_moderation: true },
        { id: "b", provider: "sim", moderation: true, default_moderation: true },
      ]),
      "switchyard.json: models[1].default_moderation: only one model can be the default moderation model (also models[0])",
    ],
    [
      "default moderation on a model without moderation",
      (r) => (r.models = [{ ...CHAT, default_moderation: true }]),
      "switchyard.json: models[0].default_moderation: only a model with moderation: true can be the default",
    ],
    [
      "unknown moderation category threshold",
      (
        r,
      ) => (r.models = [{
        id: "a",
        provider: "sim",
        moderation: true,
        moderation_thresholds: { gore: 0.5 },
      }]),
      "switchyard.json: models[0].moderation_thresholds.gore: unknown parameter",
    ],
    [
      "bad base_url",
      (r) => (r.providers = [SIM, { id: "o", style: "openai", base_url: "ftp://x" }]),
      'switchyard.json: providers[1].base_url: expected an http(s) URL, but got "ftp://x"',
    ],
    [
      "bad CORS origin",
      (r) => (r.server = { cors_origins: ["example.com/"] }),
      'switchyard.json: server.cors_origins[0]: expected "*" or an origin like "https://app.example.com", but got "example.com/"',
    ],
    [
      "no providers",
      (r) => (r.providers = []),
      "switchyard.json: providers: expected at least 1 item, but got 0",
    ],
    [
      "providers left out",
      (r) => delete r.providers,
      "switchyard.json: providers: missing required parameter",
    ],
    [
      "a model id that cannot be one",
      (r) => (r.models = [{ ...CHAT, id: "bad id" }]),
      'switchyard.json: models[0].id: expected a model id of letters, digits and . _ : / - (at most 128, starting with a letter or digit), but got "bad id"',
    ],
    [
      "a threshold out of range",
      (r) => (r.models = [{
        id: "a",
        provider: "sim",
        moderation: true,
        moderation_thresholds: { hate: 2 },
      }]),
      "switchyard.json: models[0].moderation_thresholds.hate: expected a number from 0 to 1, but got 2",
    ],
    [
      "a string list too long",
      (r) => (r.server = { cors_origins: new Array(65).fill("*") }),
      "switchyard.json: server.cors_origins: expected at most 64 items, but got 65",
    ],
    [
      "port out of range",
      (r) => (r.server = { port: 70000 }),
      "switchyard.json: server.port: expected an integer from 0 to 65535, but got 70000",
    ],
  ];
  for (const [name, patch, expected] of cases) {
    const raw = base();
    patch(raw);
    const message = configError(raw);
    assert.ok(
      message.startsWith(expected),
      `${name}:\n  got      ${message}\n  expected ${expected}…`,
    );
  }
});

Deno.test("a root that is not an object is a config error", () => {
  assert.equal(configError([]), "switchyard.json: (root): expected an object, but got an array");
});

Deno.test("--config, --config= and SWITCHYARD_CONFIG name the file, in that order", () => {
  const env = (v?: string) => (name: string) => name === "SWITCHYARD_CONFIG" ? v : undefined;
  assert.equal(configPath({ args: ["--config", "a.json"], env: env("b.json") }), "a.json");
  assert.equal(configPath({ args: ["--config=c.json"], env: env() }), "c.json");
  assert.equal(configPath({ args: [], env: env("b.json") }), "b.json");
  assert.equal(configPath({ args: [], env: env() }), "switchyard.json");
  assert.throws(() => configPath({ args: ["--config"], env: env() }), /--config needs a file path/);
});

Deno.test("PORT and SWITCHYARD_KV override the file; a bad PORT is an error", () => {
  const config = parseConfig(base(), "x.json");
  const vars: Record<string, string> = { PORT: "9123", SWITCHYARD_KV: ":memory:" };
  applyEnv(config, (n) => vars[n]);
  assert.equal(config.server.port, 9123);
  assert.equal(config.kv.path, ":memory:");
  assert.throws(
    () => applyEnv(config, (n) => (n === "PORT" ? "http" : undefined)),
    /PORT: must be a port number/,
  );
});

Deno.test("loadConfig reports a missing file and invalid JSON with the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      loadConfig({ args: ["--config", `${dir}/none.json`], env: () => undefined }),
      new ConfigError(`${dir}/none.json: cannot read config: file not found`),
    );
    await Deno.writeTextFile(`${dir}/bad.json`, "{ nope");
    await assert.rejects(
      loadConfig({ args: ["--config", `${dir}/bad.json`], env: () => undefined }),
      (e: unknown) =>
        e instanceof ConfigError && e.message.startsWith(`${dir}/bad.json: invalid JSON:`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the repository's switchyard.json is valid and matches the spec's featured catalogue", async () => {
  const config = await loadConfig({ args: [], env: () => undefined });
  const featured = config.models.filter((m) => m.featured);
  assert.equal(featured.length, 4);
  for (const m of featured) {
    assert.equal(m.chat_completions, true);
    assert.equal(m.provider, "sim");
  }
  const labels = new Set(featured.flatMap((m) => m.labels));
  for (const label of ["chat completions", "reasoning", "function calling", "multimodal"]) {
    assert.ok(labels.has(label), `featured models lack the label ${label}`);
  }
  const moderation = config.models.filter((m) => m.default_moderation);
  assert.equal(moderation.length, 1);
  assert.equal(moderation[0]!.provider, "sim");
  const images = config.models.filter((m) => m.image_generation && m.provider === "sim");
  assert.equal(images.length, 1);
  assert.equal(images[0]!.access, "preview");
  assert.deepEqual(images[0]!.image_generation!.sizes, ["1024x1024", "1024x1792", "1792x1024"]);
});

Deno.test("SWITCHYARD_CONFIG_JSON holds the whole config when no --config is given", async () => {
  const doc = JSON.stringify({ ...base(), kv: { path: ":memory:" } });
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  const config = await loadConfig({
    args: [],
    env: env({ SWITCHYARD_CONFIG_JSON: doc, PORT: "9" }),
  });
  assert.equal(config.models[0]!.id, "m");
  assert.equal(config.server.port, 9);
  await assert.rejects(
    loadConfig({ args: [], env: env({ SWITCHYARD_CONFIG_JSON: "{" }) }),
    /^ConfigError: SWITCHYARD_CONFIG_JSON: invalid JSON/,
  );
  await assert.rejects(
    loadConfig({
      args: [],
      env: env({ SWITCHYARD_CONFIG_JSON: JSON.stringify({ providers: [] }) }),
    }),
    /^ConfigError: SWITCHYARD_CONFIG_JSON: providers: /,
  );
  // --config wins over it.
  await assert.rejects(
    loadConfig({
      args: ["--config", "/nonexistent.json"],
      env: env({ SWITCHYARD_CONFIG_JSON: doc }),
    }),
    /\/nonexistent.json: cannot read config: file not found/,
  );
});
