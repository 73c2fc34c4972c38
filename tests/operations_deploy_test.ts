/**
 * The deployment files (issue #16). The Dockerfile and the systemd unit cannot be built or
 * installed here, so their flags and paths are checked against the repository, and the
 * commands they run are run; the Caddy reverse proxy (Debian's package, when installed) is
 * run as the README's Deploying section says, with TLS from Caddy's own local CA.
 */
import assert from "node:assert/strict";
import { parseServeArgs } from "../src/serve/args.ts";
import {
  dataTempDir,
  freePort,
  ROOT,
  simConfig,
  spawnSwitchyard,
  startFlags,
  tempConfig,
} from "./support/process.ts";

const repoConfig = JSON.parse(await Deno.readTextFile(`${ROOT}switchyard.json`));

const START_FLAGS = await startFlags();

/** Checks that a deployment's flags are exactly the start task's, with its own config file and
 * data directory for `switchyard.json` and `data` (the code it reads, the image worker's
 * modules, at the same paths relative to its working directory). */
function assertStartFlags(flags: string[], own: { config: string; data: string }): void {
  const expected = mapPath(mapPath(START_FLAGS, "switchyard.json", own.config), "data", own.data);
  assert.deepEqual(flags, expected, "deno task start's flags, with the deployment's own paths");
}

/** `flags` with `from` in their paths replaced by `to` (a deployment's path, mapped to a
 * temporary directory to run its command here). */
function mapPath(flags: string[], from: string, to: string): string[] {
  return flags.map((f) =>
    f.startsWith("--allow-")
      ? f.replace(
        /=(.*)$/,
        (_, list: string) => "=" + list.split(",").map((p) => (p === from ? to : p)).join(","),
      )
      : f
  );
}

/** A Dockerfile's instructions (continuation lines joined, comments dropped). */
function instructions(text: string): [string, string][] {
  return text.replace(/\\\n\s*/g, " ").split("\n")
    .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"))
    .map((line) => {
      const [word, ...rest] = line.trim().split(/\s+/);
      return [word!.toUpperCase(), rest.join(" ")];
    });
}

/** systemd unit settings, in order (a key may repeat). */
function unitSettings(text: string): [string, string][] {
  return text.split("\n")
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
}

Deno.test("Dockerfile: the official Deno image of this Deno version, non-root, a data volume, start's flags, a health check that passes", async () => {
  const docker = instructions(await Deno.readTextFile(`${ROOT}Dockerfile`));
  const get = (word: string) => docker.filter(([w]) => w === word).map(([, rest]) => rest);
  assert.deepEqual(get("FROM"), [`denoland/deno:${Deno.version.deno}`]);
  const users = get("USER");
  assert.deepEqual(users, ["deno"], "runs as the image's non-root user");
  const userAt = docker.findIndex(([w]) => w === "USER");
  assert.ok(docker.slice(userAt).every(([w]) => w !== "RUN"), "nothing runs as root after USER");
  for (const copy of get("COPY")) {
    for (const source of copy.split(/\s+/).slice(0, -1)) {
      await Deno.stat(`${ROOT}${source}`); // every copied path exists
    }
  }
  assert.deepEqual(get("VOLUME"), ['["/data"]']);
  const env = Object.fromEntries(
    get("ENV").flatMap((e) => e.split(/\s+/)).map((kv) => kv.split("=") as [string, string]),
  );
  assert.equal(env.SWITCHYARD_KV, "/data/switchyard.kv", "the KV file lives in the volume");
  assert.ok(get("RUN").some((r) => r.includes("chown deno:deno /data")));
  assert.deepEqual(get("EXPOSE"), [String(repoConfig.server.port)]);
  const cmd: string[] = JSON.parse(get("CMD")[0]!);
  assert.equal(cmd[0], "run");
  assert.equal(cmd.at(-1), "main.ts");
  assertStartFlags(cmd.slice(1, -1), { config: "switchyard.json", data: "/data" });
  assert.deepEqual(get("WORKDIR"), ["/app"], "the relative grants resolve in the copied checkout");
  assert.ok(get("COPY").some((c) => c === "src ./src"), "the image worker's modules are in ./src");
  const health = get("HEALTHCHECK")[0]!;
  const check: string[] = JSON.parse(health.slice(health.indexOf("CMD ") + 4));
  assert.match(
    check.join(" "),
    new RegExp(`http://127\\.0\\.0\\.1:${repoConfig.server.port}/healthz`),
  );

  // Run both commands as the image would (the port moved to a free one, /data to a directory
  // of this checkout's data/).
  const dir = await dataTempDir();
  const port = freePort();
  try {
    await using server = spawnSwitchyard({
      command: mapPath(cmd, "/data", dir),
      env: { ...env, SWITCHYARD_KV: `${dir}/switchyard.kv`, PORT: String(port) },
    });
    await server.url();
    const probe = await new Deno.Command(check[0]!, {
      args: check.slice(1).map((a) => a.replace(`:${repoConfig.server.port}/`, `:${port}/`)),
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(probe.code, 0, new TextDecoder().decode(probe.stderr));
    server.child.kill("SIGTERM");
    assert.equal((await server.status()).code, 0, server.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("systemd unit: start's flags and a valid command line, the KV file in its state directory, a stop timeout longer than the grace", async () => {
  const settings = unitSettings(await Deno.readTextFile(`${ROOT}deploy/switchyard.service`));
  const one = (key: string) => {
    const values = settings.filter(([k]) => k === key).map(([, v]) => v);
    assert.equal(values.length, 1, key);
    return values[0]!;
  };
  const env = Object.fromEntries(
    settings.filter(([k]) => k === "Environment").map(([, v]) => v.split("=") as [string, string]),
  );
  assert.equal(env.SWITCHYARD_KV, `/var/lib/${one("StateDirectory")}/switchyard.kv`);
  assert.equal(env.DENO_DIR, `/var/cache/${one("CacheDirectory")}`);
  assert.equal(one("KillSignal"), "SIGTERM");
  assert.ok(Number(one("TimeoutStopSec")) > 10, "longer than shutdown_grace_seconds' default");
  const [deno, run, ...rest] = one("ExecStart").split(" ");
  assert.equal(deno, "/usr/local/bin/deno");
  assert.equal(run, "run");
  const main = rest.indexOf("main.ts");
  const flags = rest.slice(0, main);
  assertStartFlags(flags, {
    config: "/etc/switchyard/switchyard.json",
    data: "/var/lib/switchyard",
  });
  const args = rest.slice(main + 1);
  assert.deepEqual(parseServeArgs(args), {
    help: false,
    version: false,
    config: "/etc/switchyard/switchyard.json",
  });
  assert.equal(one("WorkingDirectory"), "/opt/switchyard");

  // The same command, with this checkout for /opt/switchyard and temporary paths.
  await using config = await tempConfig(simConfig());
  const mapped = mapPath(
    mapPath(flags, "/etc/switchyard/switchyard.json", config.path),
    "/var/lib/switchyard",
    `${config.dir}/state`,
  );
  await using proc = spawnSwitchyard({
    command: ["run", ...mapped, "main.ts", "--config", config.path],
    env: { SWITCHYARD_KV: `${config.dir}/state/switchyard.kv`, DENO_DIR: `${config.dir}/cache` },
  });
  const health = await fetch(`${await proc.url()}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  proc.child.kill("SIGTERM");
  assert.equal((await proc.status()).code, 0);
  assert.ok((await Deno.stat(`${config.dir}/state/switchyard.kv`)).isFile);
});

Deno.test("the deploying page's Caddy example is deploy/Caddyfile", async () => {
  const readme = await Deno.readTextFile(`${ROOT}docs/deploying.md`);
  const block = readme.match(/```caddyfile\n([\s\S]*?)```/)![1]!;
  const lines = (await Deno.readTextFile(`${ROOT}deploy/Caddyfile`)).split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  assert.deepEqual(
    block.split("\n").map((l) => l.trim()).filter((l) => l !== ""),
    lines.map((l) => l.trim()),
  );
});

/** Whether Caddy runs here (spawning a missing program throws at once). */
async function hasCaddy(): Promise<boolean> {
  try {
    const run = new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" });
    return (await run.output()).success;
  } catch {
    return false;
  }
}
const caddy = await hasCaddy();

Deno.test({
  name:
    "Caddy from Debian's packages in front, as the README's Deploying section says: TLS, streams, client IPs",
  ignore: !caddy,
  async fn() {
    const upstream = freePort();
    const https = freePort();
    await using config = await tempConfig({
      ...simConfig({ tokenDelayMs: 20 }),
      server: { hostname: "127.0.0.1", port: upstream, trust_proxy: true },
    });
    await using gateway = spawnSwitchyard({ args: ["--config", config.path] });
    await gateway.url();
    // The test machine's global options (no admin endpoint, Caddy's local CA instead of ACME,
    // unprivileged ports), then deploy/Caddyfile as it is.
    const caddyfile = `${config.dir}/Caddyfile`;
    await Deno.writeTextFile(
      caddyfile,
      `{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\thttp_port ${freePort()}\n` +
        `\thttps_port ${https}\n}\nimport ${ROOT}deploy/Caddyfile\n`,
    );
    const proxy = new Deno.Command("caddy", {
      args: ["run", "--config", caddyfile, "--adapter", "caddyfile"],
      env: {
        SWITCHYARD_DOMAIN: "localhost",
        SWITCHYARD_UPSTREAM: `127.0.0.1:${upstream}`,
        XDG_DATA_HOME: `${config.dir}/caddy-data`,
        XDG_CONFIG_HOME: `${config.dir}/caddy-config`,
      },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const caddyLog = proxy.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let log = "";
    const reading = (async () => {
      for (;;) {
        const { value, done } = await caddyLog.read();
        if (done) return;
        log += value;
      }
    })();
    try {
      const root = `${config.dir}/caddy-data/caddy/pki/authorities/local/root.crt`;
      let client: Deno.HttpClient | undefined;
      let models: Response | undefined;
      while (!models) {
        try {
          client ??= Deno.createHttpClient({ caCerts: [await Deno.readTextFile(root)] });
          models = await fetch(`https://localhost:${https}/v1/models`, {
            client,
            headers: { "x-forwarded-for": "not-an-ip" },
          });
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.equal(models.status, 200, log);
      assert.equal((await models.json()).data.length, 4);
      const stream = await fetch(`https://localhost:${https}/v1/chat/completions`, {
        client: client!,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "sim-chat",
          stream: true,
          messages: [{ role: "user", content: "Hello" }],
        }),
      });
      assert.match(stream.headers.get("content-type")!, /^text\/event-stream/);
      const text = await stream.text();
      assert.ok(text.trimEnd().endsWith("data: [DONE]"));
      client!.close();
      // Caddy put the client's address in X-Forwarded-For; the garbage one was not used.
      gateway.child.kill("SIGTERM");
      await gateway.status();
      const ips = gateway.stdout.trim().split("\n").map((l) => JSON.parse(l).ip);
      assert.deepEqual([...new Set(ips)], ["127.0.0.1"]);
    } finally {
      proxy.kill("SIGTERM");
      await proxy.status;
      await reading;
    }
  },
});
