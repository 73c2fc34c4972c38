/**
 * The shared catalogue on real processes (issue #16): an instance started with a smaller or
 * different config, and one that cannot bind its port, leave a running instance's catalogue
 * unchanged, an admin-disabled model included; `deno task catalogue prune` removes on purpose.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN } from "./support/admin.ts";
import {
  hasColourOrStack,
  ROOT,
  simConfig,
  spawnSwitchyard,
  tempConfig,
} from "./support/process.ts";

async function adminModels(url: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${url}/admin/models`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(res.status, 200);
  return (await res.json()).data;
}

Deno.test("a smaller config, and an instance that fails to bind, leave a running instance's catalogue unchanged", async () => {
  await using full = await tempConfig(simConfig());
  const kv = full.kv;
  const env = { SWITCHYARD_KV: kv, SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN };
  await using running = spawnSwitchyard({ args: ["--config", full.path], env });
  const url = await running.url();
  const disable = await fetch(`${url}/admin/models/sim-vision`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ enabled: false }),
  });
  assert.equal(disable.status, 200, await disable.text());
  const before = await adminModels(url);
  assert.equal(before.length, 4);

  // An instance with a two-model config (one of them re-enabling sim-vision) runs a while.
  await using small = await tempConfig(simConfig({
    models: [
      { id: "sim-chat", provider: "sim", chat_completions: true },
      { id: "sim-vision", provider: "sim", chat_completions: true, enabled: true },
    ],
  }));
  {
    await using other = spawnSwitchyard({ args: ["--config", small.path], env });
    await other.url();
    other.child.kill("SIGTERM");
    assert.equal((await other.status()).code, 0, other.stderr);
  }

  // An instance that cannot listen (the running one has the port) with a config that changes
  // every model: it must write nothing.
  const port = new URL(url).port;
  await using changed = await tempConfig(simConfig({
    models: (simConfig().models as Record<string, unknown>[]).map((m) => ({
      ...m,
      labels: ["changed"],
      enabled: true,
    })),
  }));
  const busy = spawnSwitchyard({ args: ["--config", changed.path, "--port", port], env });
  const status = await busy.status();
  assert.equal(status.code, 1);
  assert.equal(
    busy.stderr.trimEnd().split("\n").at(-1),
    `switchyard: cannot start: 127.0.0.1:${port} is already in use (server.port, PORT or --port)`,
  );
  assert.ok(!hasColourOrStack(busy.stderr), "no colour, no stack");

  const after = await adminModels(url);
  assert.deepEqual(after, before);
  assert.equal(after.find((m) => m.id === "sim-vision")!.enabled, false);

  // What another process sees in the file is the same.
  const check = spawnSwitchyard({ args: ["--config", full.path], env });
  await check.url();
  check.child.kill("SIGTERM");
  await check.status();
  assert.deepEqual(await adminModels(url), before);
  running.child.kill("SIGTERM");
  assert.equal((await running.status()).code, 0);
});

Deno.test("deno task catalogue prune removes only config-owned models that the config no longer lists", async () => {
  await using full = await tempConfig(simConfig());
  const env = { SWITCHYARD_KV: full.kv, NO_COLOR: "1" };
  {
    await using seeded = spawnSwitchyard({ args: ["--config", full.path], env });
    const url = await seeded.url();
    await fetch(`${url}/v1/models`).then((r) => r.body?.cancel());
    seeded.child.kill("SIGTERM");
    await seeded.status();
  }
  await using small = await tempConfig(simConfig({
    models: [{ id: "sim-chat", provider: "sim", chat_completions: true }],
  }));
  const cli = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "catalogue", ...args, "--config", small.path],
      cwd: ROOT,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output().then((o) => ({
      code: o.code,
      stdout: new TextDecoder().decode(o.stdout),
      stderr: new TextDecoder().decode(o.stderr),
    }));
  const dry = await cli("prune", "--dry-run");
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, "sim-moderation\nsim-tools\nsim-vision\n");
  const pruned = await cli("prune");
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(pruned.stdout, "sim-moderation\nsim-tools\nsim-vision\n");
  assert.match(pruned.stderr, /Pruned 3 config-owned models/);
  const list = await cli("list");
  assert.match(
    list.stdout,
    /^ID\s+PROVIDER\s+OWNER\s+ENABLED\s+IN CONFIG\nsim-chat\s+sim\s+config\s+yes\s+yes\n$/,
  );
  const usage = await cli("prune", "--force");
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^catalogue: prune does not take --force\n/);
});
