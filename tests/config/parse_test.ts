import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";

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
      (r) => (r.providers = [SIM, { id: "v", style: "watsonx" }]),
      'switchyard.json: providers[1].style: expected "openai", "anthropic", "gemini", "simulator", "azure", "vertex" or "bedrock", but got "watsonx"',
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

Deno.test("models[].hosted_tools: drop (the default, left absent) or refuse", () => {
  const parse = (model: Record<string, unknown>) =>
    parseConfig({ providers: [SIM], models: [{ ...CHAT, ...model }] }, "switchyard.json")
      .models[0]!;
  assert.equal(parse({}).hosted_tools, undefined);
  assert.equal(parse({ hosted_tools: "drop" }).hosted_tools, "drop");
  assert.equal(parse({ hosted_tools: "refuse" }).hosted_tools, "refuse");
  assert.match(
    configError({ providers: [SIM], models: [{ ...CHAT, hosted_tools: "fail" }] }),
    /models\[0\]\.hosted_tools/,
  );
});
