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
    cache: null,
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

Deno.test("lookups of one key made while a read is under way share the next read, which starts after them", async () => {
  using base = await Deno.openKv(":memory:");
  // A KV whose reads, once gated, take their snapshot at once but answer when the gate opens.
  let gate: PromiseWithResolvers<void> | null = null;
  let reads = 0;
  const kv = new Proxy(base, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "get") return typeof value === "function" ? value.bind(target) : value;
      return async (key: Deno.KvKey) => {
        reads++;
        const entry = await target.get(key);
        if (gate) await gate.promise;
        return entry;
      };
    },
  });
  const store = new KeyStore(kv, new FakeClock());
  const { record } = await store.create({ name: "k" });
  // Another process's view of the same KV.
  const other = new KeyStore(base, new FakeClock());
  gate = Promise.withResolvers<void>();
  const first = store.lookup(record.hash);
  await new Promise((resolve) => setTimeout(resolve, 0)); // its snapshot is taken
  await other.update(record.id, { disabled: true });
  // Made after the change, while the first read (which predates it) is under way.
  const later = Array.from({ length: 31 }, () => store.lookup(record.hash));
  const before = reads;
  gate.resolve();
  gate = null;
  const [a, ...rest] = await Promise.all([first, ...later]);
  assert.equal(before, 1, "the later lookups wait for the read under way");
  assert.equal(reads, 2, "and share one read after it");
  assert.equal(a!.record.disabled, false, "the first read predates the change");
  assert.ok(rest.every((entry) => entry!.record.disabled), "the shared read follows it");
  // With nothing under way, a lookup reads at once.
  await other.revoke(record.id);
  assert.equal(await store.lookup(record.hash), null);
  assert.equal(reads, 3);
  // Another key's lookup is not held back by this one's read.
  const second = await store.create({ name: "k2" });
  const [x, y] = await Promise.all([
    store.lookup(record.hash),
    store.lookup(second.record.hash),
  ]);
  assert.equal(x, null);
  assert.equal(y!.record.name, "k2");
  assert.equal(reads, 5);
});
