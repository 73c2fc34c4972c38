/**
 * Least privilege (issue #33): the start task and its siblings grant no `--allow-all`, no FFI,
 * no subprocesses, and read and write only named paths (the code they read is the image
 * worker's modules, which Deno reads from disk for a `Worker`); a config or KV file outside them
 * stops the start with one line that says what to do. (Docker's and systemd's flags are checked
 * against the start task's in operations_deploy_test.ts; the disconnect safeguard under these
 * flags in disconnects_process_test.ts.)
 */
import assert from "node:assert/strict";
import { CLOUD_TOKEN_FILES, READ_GRANTS, WRITE_GRANTS } from "../src/serve/grants.ts";
import {
  dataTempDir,
  hasColourOrStack,
  MAIN,
  ROOT,
  simConfig,
  spawnSwitchyard,
  startFlagsSync,
  tempConfig,
} from "./support/process.ts";

const tasks: Record<string, string> = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;

/** The permission flags of a task's command (short forms and permission sets included). */
function permissions(task: string): string[] {
  return tasks[task]!.split(" ").filter((word) =>
    /^(-[ARWNESP](=|$)|--allow-|--permission-set)/.test(word)
  );
}

const LIBC = "--allow-ffi=/lib/x86_64-linux-gnu/libc.so.6,/lib/aarch64-linux-gnu/libc.so.6";

/** The modules a `Worker` started on `entry` loads, relative to the repository: the entry and
 * what it imports for its code, transitively (`import type` loads nothing). */
async function workerModules(entry: string): Promise<string[]> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  const graph: {
    modules: { specifier: string; dependencies?: { code?: { specifier: string } }[] }[];
  } = JSON.parse(new TextDecoder().decode(stdout));
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const root = new URL(ROOT, "file:///").href;
  const seen = new Set<string>();
  const visit = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dependency of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dependency.code) visit(dependency.code.specifier);
    }
  };
  visit(new URL(entry, root).href);
  return [...seen].map((specifier) => {
    assert.ok(specifier.startsWith(root), `the image worker imports ${specifier}`);
    return specifier.slice(root.length);
  });
}

/** The image worker's modules: the code the start task lets Switchyard read. */
const WORKER_MODULES = await workerModules("src/images/worker.ts");

Deno.test("start, dev, compile and start:trim grant no --allow-all, run or sys, and read and write only named paths", () => {
  for (const task of ["start", "dev", "compile", "start:trim"]) {
    const flags = permissions(task);
    for (const flag of flags) {
      assert.ok(
        !/^(-[ARWNESP](=|$)|--permission-set|--allow-(all|run|sys|import|scripts))/.test(flag),
        `${task} grants ${flag}`,
      );
    }
    const read = flags.filter((f) => f.startsWith("--allow-read"));
    assert.equal(read.length, 1, `${task}: one --allow-read`);
    assert.deepEqual(
      read[0]!.split("=")[1]?.split(",").slice(0, 5),
      ["switchyard.json", "data", ...CLOUD_TOKEN_FILES],
      `${task}: reads the config, the data directory and the service account tokens EKS and AKS ` +
        `mount (a bedrock provider's role, an azure provider's identity), then the image ` +
        `worker's modules`,
    );
    assert.deepEqual(
      flags.filter((f) => f.startsWith("--allow-write")),
      ["--allow-write=data"],
      `${task}: writes the data directory only`,
    );
    assert.deepEqual(
      flags.filter((f) => f.startsWith("--allow-ffi")),
      task === "start:trim" ? [LIBC] : [],
      `${task}: FFI only in start:trim, and only to glibc`,
    );
    assert.ok(flags.includes("--allow-net") && flags.includes("--allow-env"), task);
  }
  // The start:trim task is the start task plus FFI, nothing else.
  assert.equal(tasks["start:trim"], tasks.start!.replace(" main.ts", ` ${LIBC} main.ts`));
  // What the error messages say is what the task grants.
  assert.deepEqual(READ_GRANTS, [
    "switchyard.json",
    "data/",
    "the service account tokens EKS and AKS mount",
    "the image worker's modules in src/",
  ]);
  assert.deepEqual(WRITE_GRANTS, ["data/"]);
});

Deno.test("the code the start task lets Switchyard read is exactly the image worker's modules", () => {
  for (const task of ["start", "dev", "compile", "start:trim"]) {
    const read = permissions(task).find((f) => f.startsWith("--allow-read="))!;
    const code = read.slice("--allow-read=".length).split(",").slice(5);
    assert.deepEqual(
      [...code].sort(),
      [...WORKER_MODULES].sort(),
      `${task}: a Worker's modules are read from disk under its permissions, so --allow-read ` +
        `names each module src/images/worker.ts loads (when an import changes, change the ` +
        `start, start:trim, dev and compile tasks, the Dockerfile, deploy/switchyard.service ` +
        `and the README's Permissions)`,
    );
  }
  assert.equal(WORKER_MODULES[0], "src/images/worker.ts");
});

Deno.test("the docs' command lines grant what the start task grants", async () => {
  const readme = await Deno.readTextFile(`${ROOT}docs/security.md`) +
    await Deno.readTextFile(`${ROOT}docs/deploying.md`);
  const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map(([, block]) => block!.replace(/\\\n\s*/g, " "))
    .filter((block) => block.includes("--allow-read=switchyard.json"));
  assert.ok(commands.length >= 2, "Security: Permissions and Scaling's deno serve --parallel");
  for (const command of commands) {
    const flags = command.split(/\s+/).filter((w) => /^(-A|--allow-|--v8-flags)/.test(w));
    assert.deepEqual(flags, startFlagsSync(), command);
  }
});

Deno.test("under the start task's flags the image worker starts and paints", async () => {
  await using config = await tempConfig(simConfig({
    models: [{ id: "sim-image", provider: "sim", image_generation: { sizes: ["256x256"] } }],
  }));
  await using proc = spawnSwitchyard({ args: ["--config", config.path] });
  const url = await proc.url();
  const res = await fetch(`${url}/v1/images/generations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "sim-image", prompt: "a red train", size: "256x256" }),
  });
  const body = await res.text();
  assert.equal(res.status, 200, `${body}\n${proc.stderr}`);
  assert.match(JSON.parse(body).data[0].url, /^data:image\/jpeg;base64,\/9j\//);
  assert.doesNotMatch(proc.stderr, /NotCapable|read access|--allow-read/);
});

/** Starts main.ts with the start task's flags and `args`; it must fail at start. */
async function failsToStart(args: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), MAIN, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", PORT: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, stderr);
  assert.ok(!hasColourOrStack(stderr), stderr);
  assert.equal(stderr.trim().split("\n").length, 1, stderr);
  return stderr.trim();
}

/** Starts main.ts with the start task's flags, `extra` flags and `args`; it must serve. */
async function starts(extra: string[], args: string[], env: Record<string, string>): Promise<void> {
  await using proc = spawnSwitchyard({
    command: ["run", ...startFlagsSync(), ...extra, MAIN, ...args],
    env: { PORT: "0", ...env },
  });
  const health = await fetch(`${await proc.url()}/healthz`);
  assert.equal(health.status, 200, proc.stderr);
  await health.body?.cancel();
}

/** The flags an error line says to add (`add --allow-… to the deno command`). */
function suggested(line: string): string[] {
  return line.match(/add (--allow-.*) to the deno command$/)![1]!.split(" ");
}

Deno.test("a config file outside the grants stops the start with one line naming it and the fix", async () => {
  const outside = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.copyFile(`${ROOT}switchyard.json`, outside);
    const line = await failsToStart(["--config", outside]);
    assert.equal(
      line,
      `switchyard: ${outside}: cannot read config: ${outside} is outside what deno task start ` +
        `lets Switchyard read (switchyard.json, data/, the service account tokens EKS and AKS ` +
        `mount, ` +
        `the image worker's modules in src/; ` +
        `docs/security.md, Permissions): ` +
        `put it under data/, or add --allow-read=${outside} to the deno command`,
    );
    // The fix it names works.
    const kv = await dataTempDir();
    try {
      await starts(suggested(line), ["--config", outside], { SWITCHYARD_KV: `${kv}/kv.sqlite` });
    } finally {
      await Deno.remove(kv, { recursive: true });
    }
  } finally {
    await Deno.remove(outside);
  }
});

Deno.test("a KV file outside the grants stops the start with one line naming it and the fix", async () => {
  const outside = await Deno.makeTempDir();
  const inside = await dataTempDir();
  try {
    await Deno.copyFile(`${ROOT}switchyard.json`, `${inside}/switchyard.json`);
    const line = await failsToStart(["--config", `${inside}/switchyard.json`], {
      SWITCHYARD_KV: `${outside}/kv.sqlite`,
    });
    assert.match(line, /^switchyard: cannot start: cannot open the KV store \(kv\.path\): /);
    assert.ok(line.includes(`${outside}/kv.sqlite is outside what deno task start lets`), line);
    assert.ok(
      line.endsWith(
        `add --allow-read=${outside}/kv.sqlite --allow-write=${outside}/kv.sqlite to the deno command`,
      ),
      line,
    );
    // The fix it names works: the file alone is enough (SQLite's -wal and -shm beside it are
    // not Deno's to check).
    await starts(suggested(line), ["--config", `${inside}/switchyard.json`], {
      SWITCHYARD_KV: `${outside}/kv.sqlite`,
    });
    assert.ok((await Deno.stat(`${outside}/kv.sqlite`)).isFile);
  } finally {
    await Deno.remove(outside, { recursive: true });
    await Deno.remove(inside, { recursive: true });
  }
});

Deno.test("under the start task's flags a bedrock role's token file outside the grants is a 502 naming it and the fix", async () => {
  const outside = await Deno.makeTempFile({ prefix: "web-identity-token-" });
  await Deno.writeTextFile(outside, "eyJhbGciOiJSUzI1NiJ9.token.sig");
  const config = simConfig();
  (config.providers as unknown[]).push({ id: "brk", style: "bedrock", region: "us-east-1" });
  (config.models as unknown[]).push({
    id: "claude",
    provider: "brk",
    upstream_model: "anthropic.claude-3-haiku-20240307-v1:0",
    chat_completions: true,
  });
  await using file = await tempConfig(config);
  try {
    await using proc = spawnSwitchyard({
      args: ["--config", file.path],
      env: {
        AWS_WEB_IDENTITY_TOKEN_FILE: outside,
        AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/switchyard",
        // Never reached: the token is read first.
        AWS_ENDPOINT_URL_STS: "http://127.0.0.1:9",
      },
    });
    const res = await fetch(`${await proc.url()}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", messages: [{ role: "user", content: "Hi" }] }),
    });
    const body = await res.json();
    assert.equal(res.status, 502, JSON.stringify(body));
    assert.equal(
      body.error.message,
      `The upstream provider "brk" has no AWS credentials: the token file ${outside} is outside ` +
        `what deno task start lets Switchyard read (switchyard.json, data/, the service account ` +
        `tokens EKS and AKS mount, the image worker's modules in src/; docs/security.md, ` +
        `Permissions): put it under data/, or add --allow-read=${outside} to the deno command. ` +
        `The operator must check the service account's IAM role.`,
    );
    assert.ok(!hasColourOrStack(proc.stderr), proc.stderr);
  } finally {
    await Deno.remove(outside);
  }
});
