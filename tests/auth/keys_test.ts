import assert from "node:assert/strict";
import { generateKey, hashKey, isKeyShaped, KeyStore } from "../../src/auth/keys.ts";
import { FakeClock } from "../support/server.ts";

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("keys are sk-sy- and 32 random base62 characters", () => {
  const keys = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const key = generateKey();
    assert.match(key, /^sk-sy-[0-9A-Za-z]{32}$/);
    assert.ok(isKeyShaped(key));
    keys.add(key);
  }
  assert.equal(keys.size, 200);
  // Every base62 character turns up (no alphabet bug), none other does.
  const chars = new Set([...keys].flatMap((k) => [...k.slice(6)]));
  assert.equal(chars.size, 62);
  assert.equal(isKeyShaped("sk-sy-short"), false);
  assert.equal(isKeyShaped("sk-sy-" + "a".repeat(31) + "!"), false);
});

Deno.test("only the SHA-256 of a key is stored", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new KeyStore(kv, new FakeClock());
  const { key, record } = await store.create({ name: "ci" });
  assert.equal(record.hash, await sha256Hex(key));
  assert.equal(hashKey(key), record.hash);
  const everything: string[] = [];
  for await (const entry of kv.list({ prefix: [] })) {
    everything.push(JSON.stringify(entry.key), JSON.stringify(entry.value));
  }
  assert.ok(everything.length > 0);
  assert.ok(!everything.join("\n").includes(key.slice(6)), "the key itself is in KV");
});

Deno.test("create, find, get, list, update and revoke", async () => {
  using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const store = new KeyStore(kv, clock);
  const a = await store.create({ name: "a", models: ["sim-*"], preview: true });
  clock.advance(1000);
  const b = await store.create({ name: "b", limits: { chat: { per_minute: 5 } } });
  assert.match(a.record.id, /^key_[0-9A-Za-z]{16}$/);
  assert.deepEqual(a.record, {
    id: a.record.id,
    name: "a",
    hash: a.record.hash,
    created: clock.now() - 1000,
    last_used: null,
    disabled: false,
    models: ["sim-*"],
    preview: true,
    limits: {},
    max_concurrent: null,
    budget: null,
  });
  assert.deepEqual(await store.findByKey(a.key), a.record);
  assert.equal(await store.findByKey(generateKey()), null);
  assert.equal(await store.findByKey("not a key"), null);
  assert.deepEqual(await store.get(b.record.id), b.record);
  assert.equal(await store.get("key_nope"), null);
  assert.deepEqual((await store.list()).map((r) => r.name), ["a", "b"]);

  const changed = await store.update(a.record.id, { name: "a2", models: null, disabled: true });
  assert.equal(changed!.name, "a2");
  assert.equal(changed!.models, null);
  assert.equal(changed!.disabled, true);
  assert.equal(changed!.preview, true);
  assert.deepEqual(await store.findByKey(a.key), changed);
  assert.equal(await store.update("key_nope", { name: "x" }), null);

  assert.equal(await store.revoke(a.record.id), true);
  assert.equal(await store.revoke(a.record.id), false);
  assert.equal(await store.findByKey(a.key), null);
  assert.equal(await store.get(a.record.id), null);
  assert.deepEqual((await store.list()).map((r) => r.name), ["b"]);
});

Deno.test("the in-process copy keeps only enabled records, newest first", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new KeyStore(kv, new FakeClock());
  const { record } = await store.create({ name: "k" });
  assert.equal(store.cached(record.hash), undefined);
  const entry = await store.lookup(record.hash);
  assert.deepEqual(store.cached(record.hash), entry);
  // An older copy never replaces a newer one.
  store.remember({ ...entry!, versionstamp: "00000000000000000000" });
  assert.equal(store.cached(record.hash)!.versionstamp, entry!.versionstamp);
  await store.update(record.id, { disabled: true });
  assert.equal(store.cached(record.hash), undefined);
  const disabled = await store.lookup(record.hash);
  assert.equal(disabled!.record.disabled, true);
  assert.equal(store.cached(record.hash), undefined);
  await store.revoke(record.id);
  assert.equal(await store.lookup(record.hash), null);
});
