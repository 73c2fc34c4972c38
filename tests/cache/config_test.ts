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
