import assert from "node:assert/strict";
import { planCache } from "../../src/cache/plan.ts";
import { ANONYMOUS, type KeyRecord, type Principal } from "../../src/auth/principal.ts";
import type { CacheConfig } from "../../src/config/types.ts";
import { ApiError } from "../../src/errors.ts";

const CONFIG: CacheConfig = {
  ttl_seconds: 60,
  max_ttl_seconds: 600,
  enabled: true,
  namespace: null,
  charge_hits: false,
  store_refusals: false,
  max_entry_bytes: 1 << 20,
  semantic: null,
};

function key(cache?: boolean | null): Principal {
  const record = { id: "key_a", cache } as KeyRecord;
  return { kind: "key", key: record };
}

const headers = (h: Record<string, string> = {}) => new Headers(h);

Deno.test("a key's call is planned in the key's scope with the model's ttl", () => {
  assert.deepEqual(planCache(CONFIG, key(), headers()), {
    scope: "key:key_a",
    lookup: true,
    ttlMs: 60_000,
  });
});

Deno.test("Cache-Control no-cache skips the lookup, no-store the cache, among other directives", () => {
  assert.equal(
    planCache(CONFIG, key(), headers({ "cache-control": "max-age=0, NO-CACHE" }))!.lookup,
    false,
  );
  assert.equal(planCache(CONFIG, key(), headers({ "cache-control": "no-store" })), null);
  assert.equal(planCache(CONFIG, key(), headers({ "cache-control": "private" }))!.lookup, true);
});

Deno.test("keys turn the cache on or off; anonymous callers need a namespace", () => {
  assert.equal(planCache(CONFIG, key(false), headers()), null);
  const off = { ...CONFIG, enabled: false };
  assert.equal(planCache(off, key(), headers()), null);
  assert.equal(planCache(off, key(true), headers())!.scope, "key:key_a");
  assert.equal(planCache(CONFIG, ANONYMOUS, headers()), null);
  const shared = { ...CONFIG, namespace: "team" };
  assert.equal(planCache(shared, ANONYMOUS, headers())!.scope, "ns:team");
  assert.equal(planCache(shared, key(), headers())!.scope, "ns:team");
});

Deno.test("x-switchyard-cache-ttl sets the ttl within the model's maximum; a bad value is a 400 naming it", () => {
  assert.equal(
    planCache(CONFIG, key(), headers({ "x-switchyard-cache-ttl": "600" }))!.ttlMs,
    600_000,
  );
  for (const value of ["0", "601", "1e2", "-5", "ten", "", "99999999999"]) {
    assert.throws(
      () => planCache(CONFIG, key(), headers({ "x-switchyard-cache-ttl": value })),
      (e: unknown) =>
        e instanceof ApiError && e.status === 400 && e.param === "x-switchyard-cache-ttl",
      value,
    );
  }
  // Checked even when the call does not use the cache.
  assert.throws(() => planCache(CONFIG, ANONYMOUS, headers({ "x-switchyard-cache-ttl": "0" })));
});
