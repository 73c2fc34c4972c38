/**
 * Starting Switchyard as an operator does (issue #16): offline on an empty cache, the default
 * KV file, the start banner and version, and one-line errors (no colour, no stack, non-zero
 * exit) for what goes wrong at start.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN } from "./support/admin.ts";
import {
  freePort,
  hasColourOrStack,
  ROOT,
  simConfig,
  spawnSwitchyard,
  type SwitchyardProcess,
  tempConfig,
} from "./support/process.ts";

const meta = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));

/** The files `deno task start` needs, copied as a fresh checkout would have them. */
async function copyCheckout(to: string): Promise<void> {
  const files = new Deno.Command("git", {
    args: [
      "ls-files",
      "-co",
      "--exclude-standard",
      "main.ts",
      "src",
      "deno.json",
      "switchyard.json",
    ],
    cwd: ROOT,
    stdout: "piped",
  }).outputSync();
  for (const file of new TextDecoder().decode(files.stdout).trim().split("\n")) {
    const target = `${to}/${file}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(`${ROOT}${file}`, target);
  }
}

/** Ends a process that failed to start and returns its stderr's lines. */
async function failed(proc: SwitchyardProcess, code: number): Promise<string[]> {
  const status = await proc.status();
  assert.equal(status.code, code, proc.stderr);
  assert.ok(!hasColourOrStack(proc.stderr), "no colour, no stack");
  assert.doesNotMatch(proc.stderr, /listening on/i);
  return proc.stderr.trimEnd().split("\n");
}

Deno.test("deno task start serves on an empty DENO_DIR with the npm registry unreachable, KV in ./data/switchyard.kv", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await copyCheckout(`${dir}/app`);
    await Deno.mkdir(`${dir}/deno_dir`);
    const port = freePort();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "start", "--port", String(port)],
      cwd: `${dir}/app`,
      env: {
        NO_COLOR: "1",
        DENO_DIR: `${dir}/deno_dir`,
        NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
        DENO_NO_UPDATE_CHECK: "1",
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let health: Record<string, unknown> | undefined;
    for (let i = 0; i < 600 && !health; i++) {
      try {
        health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.deepEqual(
      health,
      { status: "ok", version: meta.version, log_records_not_stored: 0 },
      stderr,
    );
    assert.equal(out.code, 0, stderr);
    assert.doesNotMatch(stderr, /Download|npm/);
    assert.match(
      stderr,
      new RegExp(
        `switchyard ${meta.version} listening on http://0\\.0\\.0\\.0:${port}; \\d+ models \\(\\d+ served\\); ` +
          "providers enabled: sim[ ;].*KV: data/switchyard\\.kv",
      ),
    );
    const kv = await Deno.stat(`${dir}/app/data/switchyard.kv`);
    assert.ok(kv.isFile, "the default KV file is created on first start");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--port N is used; --version prints deno.json's version", async () => {
  await using config = await tempConfig(simConfig({ port: 1 }));
  const port = freePort();
  await using proc = spawnSwitchyard({ args: ["--config", config.path, "--port", String(port)] });
  assert.equal(await proc.url(), `http://127.0.0.1:${port}`);
  const version = spawnSwitchyard({ args: ["--version"] });
  assert.equal((await version.status()).code, 0);
  assert.equal(version.stdout, `${meta.version}\n`);
});

Deno.test("start-up errors are one line with a non-zero exit", async (t) => {
  await using config = await tempConfig(simConfig());
  const cases: [string, string[], Record<string, string>, number, string][] = [
    [
      "an unknown flag, named",
      ["--conf", "x.json"],
      {},
      2,
      "switchyard: unknown option --conf (did you mean --config?) (see --help)",
    ],
    [
      "a bad flag value",
      ["--port", "abc"],
      {},
      2,
      'switchyard: --port must be a port number 0–65535, not "abc" (see --help)',
    ],
    [
      "an unreadable config",
      ["--config", config.dir],
      {},
      1,
      `switchyard: ${config.dir}: cannot read config: it is a directory, not a file`,
    ],
    [
      "a missing config",
      ["--config", `${config.dir}/none.json`],
      {},
      1,
      `switchyard: ${config.dir}/none.json: cannot read config: file not found`,
    ],
    [
      "a short admin token",
      ["--config", config.path],
      { SWITCHYARD_ADMIN_TOKEN: "a" },
      1,
      "switchyard: SWITCHYARD_ADMIN_TOKEN: must be at least 32 characters, not 1 (make one with: openssl rand -hex 32)",
    ],
  ];
  for (const [name, args, env, code, line] of cases) {
    await t.step(name, async () => {
      const lines = await failed(spawnSwitchyard({ args, env }), code);
      assert.deepEqual(lines, [line]);
    });
  }
});

Deno.test("deno serve: a config error exits non-zero before listening", async () => {
  await using bad = await tempConfig({ ...simConfig(), server: { trust_proxy: "yes" } });
  const lines = await failed(
    spawnSwitchyard({
      entry: "serve",
      args: ["--port", "0"],
      env: { SWITCHYARD_CONFIG: bad.path },
    }),
    1,
  );
  assert.deepEqual(lines, [
    `switchyard: ${bad.path}: server.trust_proxy: expected true, false or a number of hops (1–32), but got a string`,
  ]);
});

Deno.test("deno serve: the config is read before the first request, and another address is warned about", async () => {
  await using config = await tempConfig(simConfig({ port: 8000 }));
  await using proc = spawnSwitchyard({
    entry: "serve",
    args: ["--host", "127.0.0.1", "--port", "0"],
    env: {
      SWITCHYARD_CONFIG: config.path,
      SWITCHYARD_KV: config.kv,
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    },
  });
  const url = await proc.url();
  const port = new URL(url).port;
  assert.match(
    proc.stderr,
    new RegExp(
      `under deno serve the address comes from --host/--port: listening on 127\\.0\\.0\\.1:${port}, ` +
        "not the config's server.hostname/port \\(127\\.0\\.0\\.1:8000\\)",
    ),
  );
  // The app was built (and announced) before any request came.
  assert.match(proc.stderr, /admin API enabled/);
  const models = await (await fetch(`${url}/v1/models`)).json();
  assert.equal(models.data.length, 4);
  proc.child.kill("SIGTERM");
  assert.equal((await proc.status()).code, 0);
});
