import assert from "node:assert/strict";
import { Catalogue } from "../../src/catalogue/store.ts";
import type { ModelRecord } from "../../src/catalogue/model.ts";
import { FakeClock, startServer, testConfig } from "../support/server.ts";

async function ids(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/models`);
  return (await res.json()).data.map((m: { id: string }) => m.id);
}

function extraModel(id: string): ModelRecord {
  const base = testConfig().models[0]!;
  return { ...base, id, upstream_model: id, created: 1_700_000_000, source: "admin" };
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("a catalogue change in KV reaches a second app instance on the same KV", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await using a = await startServer({ kv });
    await using b = await startServer({ kv });
    assert.ok(!(await ids(b.url)).includes("late-model"));
    await a.app.services.catalogue.put(extraModel("late-model"));
    await eventually(async () => (await ids(b.url)).includes("late-model"));
    await a.app.services.catalogue.delete("late-model");
    await eventually(async () => !(await ids(b.url)).includes("late-model"));
  } finally {
    kv.close();
  }
});

Deno.test("a change made through another KV handle (another process) is seen by polling", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite`;
  const kvA = await Deno.openKv(path);
  const kvB = await Deno.openKv(path);
  try {
    await using a = await startServer({ kv: kvA, cataloguePollMs: 50 });
    await using b = await startServer({ kv: kvB, cataloguePollMs: 50 });
    await a.app.services.catalogue.put(extraModel("from-elsewhere"));
    const started = Date.now();
    await eventually(async () => (await ids(b.url)).includes("from-elsewhere"));
    assert.ok(Date.now() - started < 3000);
  } finally {
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("seeding keeps first registration times and admin models, and drops removed config models", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new FakeClock(1_750_000_000_000);
  try {
    const catalogue = await Catalogue.open({ kv, clock });
    const config = testConfig();
    await catalogue.seed(config.models);
    const created = catalogue.get("sim-chat")!.created;
    assert.equal(created, 1_750_000_000);
    await catalogue.put(extraModel("admin-added"));
    clock.advance(86_400_000);
    await catalogue.seed(config.models.filter((m) => m.id !== "sim-vision"));
    assert.equal(catalogue.get("sim-chat")!.created, created);
    assert.ok(catalogue.get("admin-added"));
    assert.equal(catalogue.get("sim-vision"), undefined);
    catalogue.close();
  } finally {
    kv.close();
  }
});
