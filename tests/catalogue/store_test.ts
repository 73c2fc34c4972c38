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

/** Writes `record` whatever the catalogue holds under its id. */
function put(catalogue: Catalogue, record: ModelRecord) {
  return catalogue.write(record.id, () => record);
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
    await put(a.app.services.catalogue, extraModel("late-model"));
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
    await put(a.app.services.catalogue, extraModel("from-elsewhere"));
    const started = Date.now();
    await eventually(async () => (await ids(b.url)).includes("from-elsewhere"));
    assert.ok(Date.now() - started < 3000);
  } finally {
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("seeding keeps first registration times and admin models, and never deletes", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new FakeClock(1_750_000_000_000);
  try {
    const catalogue = await Catalogue.open({ kv, clock });
    const config = testConfig();
    assert.deepEqual(
      (await catalogue.seed(config.models)).sort(),
      config.models.map((m) => m.id).sort(),
    );
    const created = catalogue.get("sim-chat")!.created;
    assert.equal(created, 1_750_000_000);
    await put(catalogue, extraModel("admin-added"));
    clock.advance(86_400_000);
    assert.deepEqual(await catalogue.seed(config.models.filter((m) => m.id !== "sim-vision")), []);
    assert.equal(catalogue.get("sim-chat")!.created, created);
    assert.ok(catalogue.get("admin-added"));
    assert.ok(catalogue.get("sim-vision"), "a model the config dropped stays until pruned");
    assert.deepEqual(await catalogue.prune(config.models.filter((m) => m.id !== "sim-vision")), [
      "sim-vision",
    ]);
    assert.equal(catalogue.get("sim-vision"), undefined);
    assert.ok(catalogue.get("admin-added"), "prune leaves admin-written models");
    catalogue.close();
  } finally {
    kv.close();
  }
});

Deno.test("seeding updates a config-owned model whose entry changed, never an admin-written one", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const catalogue = await Catalogue.open({ kv, clock: new FakeClock() });
    const config = testConfig();
    await catalogue.seed(config.models);
    const chat = catalogue.get("sim-chat")!;
    assert.equal(chat.source, "config");
    assert.match(chat.config_hash!, /^[0-9a-f]{24}$/);
    // The admin API disables sim-vision (the record becomes admin-owned).
    await put(catalogue, { ...catalogue.get("sim-vision")!, enabled: false, source: "admin" });
    const edited = testConfig((raw) => {
      for (const m of raw.models as Record<string, unknown>[]) m.labels = ["edited"];
    });
    const written = await catalogue.seed(edited.models);
    assert.ok(written.includes("sim-chat"));
    assert.ok(!written.includes("sim-vision"));
    assert.deepEqual(catalogue.get("sim-chat")!.labels, ["edited"]);
    assert.equal(catalogue.get("sim-chat")!.created, chat.created);
    assert.equal(catalogue.get("sim-vision")!.enabled, false, "never re-enabled");
    assert.deepEqual(catalogue.get("sim-vision")!.labels, [
      "chat completions",
      "multimodal",
      "function calling",
    ]);
    assert.deepEqual(await catalogue.seed(edited.models), [], "an unchanged config writes nothing");
    catalogue.close();
  } finally {
    kv.close();
  }
});

Deno.test("a seed that meets a concurrent admin write plans again and leaves the admin's record", async () => {
  const kv = await Deno.openKv(":memory:");
  const disabled: ModelRecord = { ...extraModel("sim-chat"), enabled: false };
  let interfered = false;
  // Between the seed's read and its first commit, "another process" writes sim-chat.
  const racing = new Proxy(kv, {
    get(target, name) {
      if (name !== "atomic") {
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          if (!interfered) {
            interfered = true;
            await target.set(["catalogue", "model", "sim-chat"], disabled);
          }
          return await commit();
        };
        return op;
      };
    },
  });
  try {
    const catalogue = await Catalogue.open({ kv: racing, clock: new FakeClock() });
    const written = await catalogue.seed(testConfig().models);
    assert.ok(interfered);
    assert.ok(!written.includes("sim-chat"));
    assert.deepEqual(catalogue.get("sim-chat"), disabled);
    assert.equal(catalogue.get("sim-vision")!.source, "config");
    catalogue.close();
  } finally {
    kv.close();
  }
});

Deno.test("catalogue writes from three processes at once on one KV file all land", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite`;
  const script = `${dir}/writer.ts`;
  const store = new URL("../../src/catalogue/store.ts", import.meta.url).href;
  const open = new URL("../../src/kv/open.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { Catalogue } from "${store}";
import { openKv } from "${open}";
const kv = await openKv(Deno.args[0]);
const catalogue = await Catalogue.open({ kv, clock: { now: () => Date.now() } });
const base = JSON.parse(Deno.args[1]);
await Promise.all(Array.from({ length: 40 }, (_, j) => {
  const id = \`m-\${Deno.args[2]}-\${j}\`;
  return catalogue.write(id, () => ({ ...base, id }));
}));
catalogue.close();
kv.close();
`,
  );
  try {
    const base = JSON.stringify(extraModel("x"));
    const runs = await Promise.all(["a", "b", "c"].map((tag) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", script, path, base, tag],
        stdout: "piped",
        stderr: "piped",
      }).output()
    ));
    for (const run of runs) assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const kv = await Deno.openKv(path);
    const catalogue = await Catalogue.open({ kv, clock: new FakeClock() });
    assert.equal(catalogue.all().filter((m) => m.id.startsWith("m-")).length, 120);
    catalogue.close();
    kv.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("discovered models are offered beside the KV records, in id order; a KV record of the same id wins, even disabled", async () => {
  const kv = await Deno.openKv(":memory:");
  const catalogue = await Catalogue.open({ kv, clock: new FakeClock() });
  try {
    await put(catalogue, extraModel("b-kv"));
    await put(catalogue, { ...extraModel("c-both"), enabled: false });
    const found = (id: string): ModelRecord => ({ ...extraModel(id), source: "discovery" });
    catalogue.setDiscovered([found("c-both"), found("a-found"), found("d-found")]);
    assert.deepEqual(catalogue.all().map((m) => [m.id, m.source]), [
      ["a-found", "discovery"],
      ["b-kv", "admin"],
      ["c-both", "admin"],
      ["d-found", "discovery"],
    ]);
    assert.equal(catalogue.get("c-both")!.enabled, false);
    assert.equal(catalogue.get("a-found")!.source, "discovery");
    // Nothing discovered is written to KV.
    const stored = await Array.fromAsync(kv.list({ prefix: ["catalogue", "model"] }));
    assert.deepEqual(stored.map((e) => e.key.at(-1)), ["b-kv", "c-both"]);
    catalogue.setDiscovered([]);
    assert.deepEqual(catalogue.all().map((m) => m.id), ["b-kv", "c-both"]);
    assert.equal(catalogue.get("a-found"), undefined);
  } finally {
    catalogue.close();
    kv.close();
  }
});
