import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";

const SIM = { id: "sim", style: "simulator" };

function withCache(cache: unknown, model: Record<string, unknown> = {}) {
  return parseConfig({
    providers: [SIM],
    models: [{ id: "m", provider: "sim", chat_completions: true, cache, ...model }],
  }, "switchyard.json").models[0]!;
}

function error(cache: unknown, model: Record<string, unknown> = {}): string {
  try {
    withCache(cache, model);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  assert.fail("the config was accepted");
}

Deno.test("a model's cache gets its defaults; absent, null or false is none", () => {
  assert.deepEqual(withCache({ ttl_seconds: 300 }).cache, {
    ttl_seconds: 300,
    max_ttl_seconds: 300,
    enabled: true,
    namespace: null,
    charge_hits: false,
    store_refusals: false,
    max_entry_bytes: 2 * 1024 * 1024,
    semantic: null,
  });
  assert.equal(withCache(undefined).cache, undefined);
  assert.equal(withCache(null).cache, undefined);
  assert.equal(withCache(false).cache, undefined);
  const full = withCache({
    ttl_seconds: 60,
    max_ttl_seconds: 3600,
    enabled: false,
    namespace: "team-a",
    charge_hits: true,
    store_refusals: true,
    max_entry_bytes: 65536,
  }).cache!;
  assert.equal(full.max_ttl_seconds, 3600);
  assert.equal(full.namespace, "team-a");
});

Deno.test("a bad cache entry is refused, naming the field", () => {
  assert.match(error({}), /models\[0\]\.cache\.ttl_seconds/);
  assert.match(error({ ttl_seconds: 0 }), /models\[0\]\.cache\.ttl_seconds/);
  assert.match(error({ ttl_seconds: 60, max_ttl_seconds: 30 }), /max_ttl_seconds.*at least/);
  assert.match(error({ ttl_seconds: 60, namespace: "a b" }), /cache\.namespace/);
  assert.match(error({ ttl_seconds: 60, ttl: 5 }), /cache\.ttl/);
  assert.match(error(true), /models\[0\]\.cache/);
  assert.match(
    error({ ttl_seconds: 60 }, { chat_completions: false, moderation: true }),
    /only a model with chat_completions/,
  );
});

Deno.test("a semantic cache names an embedding model of the config", () => {
  const config = (semantic: unknown, models: unknown[] = []) =>
    parseConfig({
      providers: [SIM],
      models: [
        { id: "m", provider: "sim", chat_completions: true, cache: { ttl_seconds: 60, semantic } },
        { id: "e", provider: "sim", embeddings: true },
        ...models,
      ],
    }, "switchyard.json");
  assert.deepEqual(config({ model: "e" }).models[0]!.cache!.semantic, {
    model: "e",
    threshold: 0.95,
    max_candidates: 100,
  });
  assert.equal(config(false).models[0]!.cache!.semantic, null);
  const refused = (semantic: unknown, pattern: RegExp) =>
    assert.throws(() => config(semantic), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, pattern);
      return true;
    });
  refused({ model: "nope" }, /models\[0\]\.cache\.semantic\.model.*no model "nope"/);
  refused({ model: "m" }, /models\[0\]\.cache\.semantic\.model.*has no embeddings/);
  refused({ model: "e", threshold: 0.2 }, /cache\.semantic\.threshold/);
  refused({ model: "e", max_candidates: 0 }, /cache\.semantic\.max_candidates/);
  refused({}, /cache\.semantic\.model/);
});
