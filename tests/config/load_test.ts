import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { applyEnv, configPath, loadConfig } from "../../src/config/load.ts";
import { parseConfig } from "../../src/config/parse.ts";

const SIM = { id: "sim", style: "simulator" };
const CHAT = { id: "m", provider: "sim", chat_completions: true };

function base(): Record<string, unknown> {
  return { providers: [SIM], models: [CHAT] };
}

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
