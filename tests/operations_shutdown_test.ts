/**
 * Shutdown on real processes (issue #16): SIGTERM/SIGINT drain open streams and exit within
 * `server.shutdown_grace_seconds` under `deno run main.ts` (what `deno task start` and the
 * compiled binary run) and `deno serve --parallel main.ts`; a second signal exits at once.
 * No timing thresholds: "within the grace" is read from what the process says (a drain that
 * ran out says so), and the grace periods are long next to the streams.
 */
import assert from "node:assert/strict";
import {
  type Entry,
  simConfig,
  spawnSwitchyard,
  startStream,
  tempConfig,
} from "./support/process.ts";

const DRAIN_NOTICE = /SIGTERM: shutting down: no new connections/;

for (const entry of ["run", "serve-parallel"] as const satisfies Entry[]) {
  Deno.test(`${entry}: SIGTERM with a stream in flight: the stream completes, then the process exits 0 before the grace runs out`, async () => {
    await using config = await tempConfig(simConfig({ grace: 60, tokenDelayMs: 50 }));
    await using proc = spawnSwitchyard({
      entry,
      args: entry === "run" ? ["--config", config.path] : ["--host", "127.0.0.1", "--port", "0"],
      env: { SWITCHYARD_CONFIG: config.path, SWITCHYARD_KV: config.kv },
    });
    const url = await proc.url();
    const stream = await startStream(url, 80);
    proc.child.kill("SIGTERM");
    await proc.waitFor(DRAIN_NOTICE);
    const text = await stream.rest;
    assert.match(text, /"finish_reason":"(stop|length)"/);
    assert.ok(text.trimEnd().endsWith("data: [DONE]"), text.slice(-200));
    const status = await proc.status();
    assert.equal(status.code, 0, proc.stderr);
    assert.doesNotMatch(proc.stderr, /grace period is over/);
    // Its record was written before the exit.
    const records = proc.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(records.some((r) => r.path === "/v1/chat/completions" && r.status === 200));
  });
}

Deno.test("serve-parallel: an idle server exits on SIGTERM (no timer, watch or image worker of the app keeps a worker alive)", async () => {
  await using config = await tempConfig(simConfig({
    grace: 120,
    models: [
      { id: "sim-chat", provider: "sim", chat_completions: true },
      { id: "sim-image", provider: "sim", image_generation: { sizes: ["256x256"] } },
    ],
  }));
  await using proc = spawnSwitchyard({
    entry: "serve-parallel",
    args: ["--host", "127.0.0.1", "--port", "0"],
    env: { SWITCHYARD_CONFIG: config.path, SWITCHYARD_KV: config.kv },
  });
  const url = await proc.url();
  // Touch what starts background work: the catalogue, limits, image workers, a stream, health.
  for (const path of ["/v1/models", "/healthz"]) {
    const res = await fetch(`${url}${path}`);
    await res.body?.cancel();
  }
  for (let i = 0; i < 2; i++) { // the anonymous image limit is 2 a minute
    const image = await fetch(`${url}/v1/images/generations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-image", prompt: "a red train", size: "256x256" }),
    });
    assert.equal(image.status, 200, await image.text());
  }
  await (await startStream(url, 5)).rest;
  proc.child.kill("SIGTERM");
  const status = await proc.status();
  assert.equal(status.code, 0, proc.stderr);
  assert.doesNotMatch(proc.stderr, /grace period is over/);
});

for (const entry of ["run", "serve"] as const satisfies Entry[]) {
  Deno.test(`${entry}: a stream longer than the grace period is cut when it runs out, and the process exits`, async () => {
    await using config = await tempConfig(simConfig({ grace: 1, tokenDelayMs: 200 }));
    await using proc = spawnSwitchyard({
      entry,
      args: entry === "run" ? ["--config", config.path] : ["--host", "127.0.0.1", "--port", "0"],
      env: { SWITCHYARD_CONFIG: config.path, SWITCHYARD_KV: config.kv },
    });
    const stream = await startStream(await proc.url(), 1000);
    proc.child.kill("SIGTERM");
    const status = await proc.status();
    assert.equal(status.code, 0, proc.stderr);
    assert.match(proc.stderr, /the 1 s shutdown grace period is over: exiting with requests open/);
    assert.doesNotMatch(await stream.rest, /\[DONE\]/);
  });

  Deno.test(`${entry}: a second signal exits at once, without waiting for open streams`, async () => {
    await using config = await tempConfig(simConfig({ grace: 120, tokenDelayMs: 200 }));
    await using proc = spawnSwitchyard({
      entry,
      args: entry === "run" ? ["--config", config.path] : ["--host", "127.0.0.1", "--port", "0"],
      env: { SWITCHYARD_CONFIG: config.path, SWITCHYARD_KV: config.kv },
    });
    const stream = await startStream(await proc.url(), 1000);
    proc.child.kill("SIGTERM");
    await proc.waitFor(DRAIN_NOTICE);
    proc.child.kill("SIGINT");
    const status = await proc.status();
    assert.equal(status.code, 130, proc.stderr);
    assert.match(proc.stderr, /SIGINT again: exiting now without waiting for open requests/);
    assert.doesNotMatch(proc.stderr, /grace period is over/);
    assert.doesNotMatch(await stream.rest, /\[DONE\]/);
  });
}
