import assert from "node:assert/strict";
import { isServed, visibleModels } from "../../src/catalogue/access.ts";
import { ModelDiscovery } from "../../src/catalogue/discovery.ts";
import { ANONYMOUS_VIEWER } from "../../src/catalogue/model.ts";
import { Catalogue } from "../../src/catalogue/store.ts";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";
import { inlineImageWork } from "../../src/images/work.ts";
import { Logger } from "../../src/log/logger.ts";
import { createProviders } from "../../src/providers/registry.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../support/fake_openai.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";
import { NativeHttpClient } from "../../src/http/client/native.ts";

const SIM = { id: "sim", style: "simulator" };
const OA = { id: "oa", style: "openai", api_key_env: "OA_KEY" };

/** The messages of the log lines written to stderr, one a line. */
function logged(output: CapturedOutput): string {
  return output.err.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l).message).join(
    "\n",
  );
}

function providerConfig(provider: Record<string, unknown>) {
  return parseConfig({ providers: [provider] }, "switchyard.json").providers[0]!;
}

function configError(provider: Record<string, unknown>): string {
  try {
    providerConfig(provider);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${e}`);
    return e.message;
  }
  assert.fail("the config was accepted");
}

Deno.test('config: discover is off by default; on, it defaults to the prefix "<id>/", access key and an hour', () => {
  assert.equal(providerConfig(OA).discovery, undefined);
  assert.equal(providerConfig({ ...OA, discover: false }).discovery, undefined);
  assert.deepEqual(providerConfig({ ...OA, discover: true }).discovery, {
    prefix: "oa/",
    access: "key",
    interval_seconds: 3600,
  });
  const set = providerConfig({
    id: "an",
    style: "anthropic",
    discover: true,
    discover_prefix: "",
    discover_access: "preview",
    discover_interval_seconds: 60,
  });
  assert.deepEqual(set.discovery, { prefix: "", access: "preview", interval_seconds: 60 });
  assert.equal(
    providerConfig({ id: "ge", style: "gemini", discover: true, discover_prefix: "g:" })
      .discovery?.prefix,
    "g:",
  );
});

Deno.test("config: each bad discovery value is an error naming the field", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...OA, discover: "yes" }, /providers\[0\]\.discover\b.*boolean/],
    [{ ...OA, discover: true, discover_prefix: 5 }, /providers\[0\]\.discover_prefix.*string/],
    [{ ...OA, discover: true, discover_prefix: "-x/" }, /providers\[0\]\.discover_prefix/],
    [{ ...OA, discover: true, discover_prefix: "a b/" }, /providers\[0\]\.discover_prefix/],
    [{ ...OA, discover: true, discover_prefix: "p".repeat(65) }, /discover_prefix/],
    [{ ...OA, discover: true, discover_access: "open" }, /providers\[0\]\.discover_access/],
    [{ ...OA, discover: true, discover_access: null }, /providers\[0\]\.discover_access/],
    [{ ...OA, discover: true, discover_interval_seconds: 59 }, /discover_interval_seconds/],
    [{ ...OA, discover: true, discover_interval_seconds: 90.5 }, /discover_interval_seconds/],
    [{ ...OA, discover: true, discover_interval_seconds: "60" }, /discover_interval_seconds/],
    [{ ...OA, discover: true, discover_interval_seconds: 604_801 }, /discover_interval_seconds/],
    [{ ...SIM, discover: true }, /providers\[0\]\.discover.*style simulator has no model list/],
    [{ ...OA, discover_prefix: "x/" }, /discover_prefix.*only a provider with discover: true/],
    [{ ...OA, discover_access: "key" }, /discover_access.*only a provider with discover: true/],
    [{ ...OA, discover_interval_seconds: 60 }, /discover_interval_seconds.*only a provider/],
    [
      { ...OA, id: "my provider", discover: true },
      /providers\[0\]\.discover.*default discover_prefix "my provider\/".*set discover_prefix/,
    ],
    [{ ...OA, discovr: true }, /providers\[0\]\.discovr/],
  ];
  for (const [provider, expected] of cases) {
    const message = configError(provider);
    assert.match(message, /^switchyard\.json: /);
    assert.match(message, expected, JSON.stringify(provider));
  }
});

/** An OpenAI-style provider `oa` (and `ob` when `second` is given) discovering from fakes,
 * with a config model `oa/gpt-up` of its own; nothing started: the test ticks. */
async function discovering(
  settings: Record<string, unknown> = {},
  second?: FakeOpenAI,
) {
  const fake = startFakeOpenAI();
  const providers = [
    {
      ...OA,
      base_url: `${fake.url}/v1`,
      max_retries: 0,
      discover: true,
      ...settings,
    },
    ...(second
      ? [{
        id: "ob",
        style: "openai",
        base_url: `${second.url}/v1`,
        api_key_env: "OB_KEY",
        discover: true,
        ...settings,
      }]
      : []),
  ];
  const models = [{
    id: `${settings.discover_prefix ?? "oa/"}gpt-up`,
    provider: "oa",
    upstream_model: "gpt-up",
    chat_completions: true,
    access: "public",
  }];
  const config = parseConfig({ providers, models }, "test.json");
  const clock = new FakeClock();
  const output = new CapturedOutput();
  const logger = new Logger({ clock, output });
  const kv = await Deno.openKv(":memory:");
  const catalogue = await Catalogue.open({ kv, clock });
  await catalogue.seed(config.models);
  const keys: Record<string, string> = { OA_KEY: fake.apiKey, OB_KEY: second?.apiKey ?? "" };
  const registry = createProviders(config, {
    env: (name) => keys[name],
    http: new NativeHttpClient(),
    clock,
    logger,
    images: inlineImageWork,
  });
  const discovery = new ModelDiscovery({
    config: config.providers,
    providers: registry,
    catalogue,
    clock,
    logger,
  });
  return {
    fake,
    clock,
    output,
    catalogue,
    registry,
    discovery,
    async [Symbol.asyncDispose]() {
      discovery.close();
      catalogue.close();
      kv.close();
      await fake.close();
    },
  };
}

Deno.test("the models listed are offered under the prefix with the access given; owned_by is the provider, the flags conservative", async () => {
  await using t = await discovering({ discover_access: "preview" });
  assert.equal(t.catalogue.get("oa/gpt-4o-mini"), undefined);
  await t.discovery.tick();
  assert.deepEqual(t.fake.violations, []);
  assert.deepEqual(t.catalogue.get("oa/gpt-4o-mini"), {
    id: "oa/gpt-4o-mini",
    provider: "oa",
    upstream_model: "gpt-4o-mini",
    owned_by: "oa",
    created: 1721172741,
    chat_completions: true,
    moderation: false,
    image_input: false,
    function_calling: false,
    image_generation: null,
    embeddings: null,
    access: "preview",
    featured: false,
    labels: [],
    context_length: null,
    default_max_tokens: null,
    default_moderation: false,
    moderation_mode: "native",
    moderation_thresholds: {},
    enabled: true,
    source: "discovery",
  });
  // Only chat models; the config's own oa/gpt-up once, as the config has it.
  assert.deepEqual(t.catalogue.all().map((m) => [m.id, m.source]), [
    ["oa/gpt-4o-mini", "discovery"],
    ["oa/gpt-up", "config"],
  ]);
  assert.equal(t.catalogue.get("oa/gpt-up")!.access, "public");
  assert.match(logged(t.output), /provider "oa" offers 2 models \(2 new, 0 gone\)/);
});

Deno.test("a KV record wins over a discovered model of the same id, and a disabled one hides it", async () => {
  await using t = await discovering();
  await t.discovery.tick();
  const found = t.catalogue.get("oa/gpt-4o-mini")!;
  await t.catalogue.write(found.id, () => ({ ...found, source: "admin", enabled: false }));
  assert.equal(t.catalogue.get("oa/gpt-4o-mini")!.source, "admin");
  assert.equal(isServed(t.catalogue.get("oa/gpt-4o-mini")!, t.registry), false);
  const viewer = { ...ANONYMOUS_VIEWER, keyId: "k", preview: true };
  const visible = visibleModels(t.catalogue, t.registry, viewer).map((m) => m.id);
  assert.deepEqual(visible, ["oa/gpt-up"]);
  // A new listing does not bring it back.
  t.clock.advance(3600_000);
  await t.discovery.tick();
  assert.equal(t.catalogue.get("oa/gpt-4o-mini")!.enabled, false);
  // Deleting the KV record shows the discovered model again.
  await t.catalogue.delete("oa/gpt-4o-mini");
  assert.equal(t.catalogue.get("oa/gpt-4o-mini")!.source, "discovery");
});

Deno.test("the list is read again each interval by the clock: a model removed upstream disappears, a new one appears with the time it was first seen", async () => {
  await using t = await discovering({ discover_interval_seconds: 600 });
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 1);
  t.fake.listing = t.fake.listing.filter((m) => m.id !== "gpt-4o-mini");
  t.fake.listing.push({ id: "llama3:8b", object: "model", owned_by: "library" });
  t.clock.advance(599_000);
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 1, "not due yet");
  assert.ok(t.catalogue.get("oa/gpt-4o-mini"));
  t.clock.advance(1_000);
  const seen = Math.floor(t.clock.now() / 1000);
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 2);
  assert.equal(t.catalogue.get("oa/gpt-4o-mini"), undefined);
  assert.equal(t.catalogue.get("oa/llama3:8b")!.created, seen);
  t.clock.advance(600_000);
  await t.discovery.tick();
  assert.equal(t.catalogue.get("oa/llama3:8b")!.created, seen, "created stays as first seen");
  assert.match(logged(t.output), /provider "oa" offers 2 models \(1 new, 1 gone\)/);
});

Deno.test("a failed listing logs a warning without the key, keeps the last list and is tried again after a minute", async () => {
  await using t = await discovering();
  await t.discovery.tick();
  t.fake.listing = [];
  t.fake.faults = [{ status: 500, message: `boom ${t.fake.apiKey}` }];
  t.clock.advance(3600_000);
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 2);
  assert.ok(t.catalogue.get("oa/gpt-4o-mini"), "the last good list is kept");
  assert.match(
    logged(t.output),
    /model discovery: provider "oa" could not list its models \(The upstream provider "oa" failed \(HTTP 500 api_error\)\.\); keeping the 2 of its last listing, trying again in 60 s/,
  );
  assert.ok(!t.output.err.includes(t.fake.apiKey) && !t.output.out.includes(t.fake.apiKey));
  t.clock.advance(59_000);
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 2);
  t.clock.advance(1_000);
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 3);
  assert.equal(t.catalogue.get("oa/gpt-4o-mini"), undefined, "the empty list now read");
});

Deno.test("ids that cannot be model ids are left out with a warning; an id two providers find goes to the first configured", async () => {
  await using second = startFakeOpenAI();
  await using t = await discovering({ discover_prefix: "" }, second);
  t.fake.listing.push({ id: "bad id", object: "model", created: 1, owned_by: "x" });
  second.listing = [{ id: "gpt-4o-mini", object: "model", created: 2, owned_by: "system" }, {
    id: "only-b",
    object: "model",
    created: 3,
    owned_by: "system",
  }];
  await t.discovery.tick();
  assert.equal(t.catalogue.get("gpt-4o-mini")!.provider, "oa");
  assert.equal(t.catalogue.get("only-b")!.provider, "ob");
  assert.equal(t.catalogue.get("bad id"), undefined);
  assert.match(logged(t.output), /provider "oa" lists 1 models whose ids .* are left out/);
});

Deno.test("a provider disabled for want of its key is not listed", async () => {
  await using t = await discovering({ api_key_env: "NOT_SET" });
  await t.discovery.tick();
  assert.equal(t.fake.received.length, 0);
  assert.equal(t.catalogue.all().length, 1);
});

Deno.test("the docs' discovery example is a valid config", async () => {
  const readme = await Deno.readTextFile(new URL("../../docs/configuration.md", import.meta.url));
  const start = readme.indexOf("## Model discovery");
  const section = readme.slice(start, readme.indexOf("\n## ", start));
  const example = /```json\n([\s\S]*?)```/.exec(section)![1]!;
  const config = parseConfig(JSON.parse(example), "docs/configuration.md");
  assert.deepEqual(config.providers.map((p) => p.discovery), [
    { prefix: "or/", access: "preview", interval_seconds: 21600 },
    { prefix: "gemini/", access: "key", interval_seconds: 3600 },
  ]);
});
