/**
 * Two server processes on one KV file: rate limits are exact across them and revocation
 * takes effect on the other process's next request.
 */
import assert from "node:assert/strict";
import { dataTempDir, freePort, startFlagsSync } from "./support/process.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TOKEN = "multi-process-admin-token-3b8e1d";
const CHAT = JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "hi" }] });

const CONFIG = {
  server: { hostname: "127.0.0.1", port: 0 },
  providers: [{ id: "sim", style: "simulator" }],
  models: [
    { id: "sim-chat", provider: "sim", chat_completions: true },
    { id: "sim-keyed", provider: "sim", chat_completions: true, access: "key" },
  ],
};

interface ServerProcess {
  url: string;
  stderr: () => string;
  stop(): Promise<void>;
}

async function spawnServer(configPath: string, kvPath: string): Promise<ServerProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), "main.ts", "--config", configPath],
    cwd: ROOT,
    env: {
      PORT: String(port),
      SWITCHYARD_KV: kvPath,
      SWITCHYARD_ADMIN_TOKEN: TOKEN,
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let err = "";
  const decoder = new TextDecoder();
  const drained = child.stderr.pipeTo(
    new WritableStream({ write: (chunk) => void (err += decoder.decode(chunk)) }),
  ).catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, 5000);
    await child.status;
    clearTimeout(timer);
    await drained;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server did not start:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stderr: () => err, stop };
}

async function send(url: string, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(`${url}${path}`, init);
  await res.body?.cancel();
  return res;
}

function chat(url: string): Promise<Response> {
  return send(url, "/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: CHAT,
  });
}

async function adminCall(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

Deno.test("two processes on one KV file: exact limits, instant revocation, shared catalogue", async () => {
  const dir = await dataTempDir();
  const configPath = `${dir}/switchyard.json`;
  await Deno.writeTextFile(configPath, JSON.stringify(CONFIG));
  const kvPath = `${dir}/kv.sqlite`;
  const [a, b] = await Promise.all([
    spawnServer(configPath, kvPath),
    spawnServer(configPath, kvPath),
  ]);
  try {
    // Stay clear of a minute boundary so that all chat requests fall in one window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_100 - intoMinute));
    const minute = Math.floor(Date.now() / 60_000);

    // 1. Anonymous chat, alternating between the processes: one count, 10 a minute.
    for (let i = 0; i < 10; i++) {
      const res = await chat(i % 2 === 0 ? a.url : b.url);
      assert.notEqual(res.status, 429, `request ${i + 1}`);
      assert.equal(res.headers.get("x-ratelimit-remaining-requests"), String(9 - i));
    }
    const eleventh = await chat(a.url);
    assert.equal(eleventh.status, 429);
    assert.equal(eleventh.headers.get("x-ratelimit-remaining-requests"), "0");
    assert.ok(Number(eleventh.headers.get("retry-after")) >= 1);
    assert.equal((await chat(b.url)).status, 429);
    assert.equal(Math.floor(Date.now() / 60_000), minute, "a minute boundary passed mid-test");

    // 2. Concurrent requests spread over both: never one more than the limit.
    const limited = await adminCall(a.url, "POST", "/admin/keys", {
      name: "limited",
      limits: { other: { per_day: 25 } },
    });
    assert.equal(limited.status, 201);
    const auth = { headers: { authorization: `Bearer ${limited.body.key}` } };
    const statuses = await Promise.all(
      Array.from({ length: 80 }, async (_, i) => {
        const res = await fetch(`${i % 2 === 0 ? a.url : b.url}/v1/models`, auth);
        const text = await res.text();
        assert.ok(res.status === 200 || res.status === 429, `${res.status} ${text}`);
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 25);
    assert.equal(statuses.filter((s) => s === 429).length, 55);

    // 3. A key revoked through one process is refused by the other on its next request.
    const victim = await adminCall(a.url, "POST", "/admin/keys", { name: "victim" });
    const victimAuth = { headers: { authorization: `Bearer ${victim.body.key}` } };
    for (const url of [a.url, b.url, a.url, b.url]) {
      assert.equal((await send(url, "/v1/models", victimAuth)).status, 200);
      assert.notEqual(
        (await send(url, "/v1/chat/completions", {
          method: "POST",
          headers: { ...victimAuth.headers, "content-type": "application/json" },
          body: CHAT,
        })).status,
        401,
      );
    }
    assert.equal((await adminCall(a.url, "DELETE", `/admin/keys/${victim.body.id}`)).status, 204);
    assert.equal((await send(b.url, "/v1/models", victimAuth)).status, 401);
    assert.equal((await send(a.url, "/v1/models", victimAuth)).status, 401);
    // Disabled through B, refused by A at once; enabled again, accepted at once.
    const other = await adminCall(a.url, "POST", "/admin/keys", { name: "other" });
    const otherAuth = { headers: { authorization: `Bearer ${other.body.key}` } };
    assert.equal((await send(a.url, "/v1/models", otherAuth)).status, 200);
    await adminCall(b.url, "PATCH", `/admin/keys/${other.body.id}`, { disabled: true });
    assert.equal((await send(a.url, "/v1/models", otherAuth)).status, 401);
    await adminCall(b.url, "PATCH", `/admin/keys/${other.body.id}`, { disabled: false });
    assert.equal((await send(a.url, "/v1/models", otherAuth)).status, 200);

    // 4. A model put through A shows up in B's /v1/models (the catalogue polls every 500 ms).
    const put = await adminCall(a.url, "PUT", "/admin/models/sim-added", {
      provider: "sim",
      chat_completions: true,
    });
    assert.equal(put.status, 201);
    const started = Date.now();
    for (;;) {
      const res = await fetch(`${b.url}/v1/models`, otherAuth);
      const ids = (await res.json()).data.map((m: { id: string }) => m.id);
      if (ids.includes("sim-added")) break;
      assert.ok(Date.now() - started < 5000, "B never listed the model added through A");
      await new Promise((r) => setTimeout(r, 25));
    }
    for (const server of [a, b]) assert.ok(!server.stderr().includes(TOKEN));
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await Deno.remove(dir, { recursive: true });
  }
});
