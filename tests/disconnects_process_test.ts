/**
 * The issue's check, end to end: `main.ts` started with exactly `deno task start`'s flags (no
 * `--allow-all`), an OpenAI-style upstream that accepts the call and never answers, a 10 KB
 * request the client leaves after 1 s. The gateway must close its upstream connection within
 * 2 s of the client leaving, for a non-streamed chat, a moderation and a streamed chat.
 */
import assert from "node:assert/strict";
import { dataTempDir, ROOT, spawnSwitchyard, startFlags } from "./support/process.ts";

/** An upstream that reads requests and never answers; it tells when each connection closed. */
function silentUpstream() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closes: { path: string; closedAt: number }[] = [];
  const accepted: Promise<void>[] = [];
  (async () => {
    for await (const conn of listener) {
      accepted.push((async () => {
        let text = "";
        const buf = new Uint8Array(65536);
        try {
          for (;;) {
            const n = await conn.read(buf);
            if (n === null) break;
            text += new TextDecoder().decode(buf.subarray(0, n));
          }
        } catch {
          // Reset by the gateway: closed too.
        }
        closes.push({ path: /^POST (\S+)/.exec(text)?.[1] ?? "", closedAt: performance.now() });
        try {
          conn.close();
        } catch {
          // Closed.
        }
      })());
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    closes,
    close: async () => {
      listener.close();
      await Promise.allSettled(accepted);
    },
  };
}

const PADDING = "The harbour master keeps a careful log of every ship. ".repeat(200);

Deno.test({
  name:
    "under the start task's flags, a client that leaves a 10 KB call closes the upstream call within 2 s (chat, moderation, stream)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const upstream = silentUpstream();
    // The start task reads and writes under data/ only: the test's files go there.
    const path = await dataTempDir();
    const dir = {
      path,
      relative: path.slice(ROOT.length),
      remove: () => Deno.remove(path, { recursive: true }),
    };
    await Deno.writeTextFile(
      `${dir.path}/config.json`,
      JSON.stringify({
        // Port 0: the gateway picks one and says which (gateway.url()).
        server: { hostname: "127.0.0.1", port: 0, shutdown_grace_seconds: 0 },
        kv: { path: `${dir.relative}/kv.sqlite` },
        providers: [{
          id: "up",
          style: "openai",
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key_env: null,
          timeout_ms: 60_000,
          max_retries: 0,
        }],
        models: [
          { id: "chat", provider: "up", upstream_model: "gpt-x", chat_completions: true },
          { id: "mod", provider: "up", upstream_model: "omni-moderation-latest", moderation: true },
        ],
      }),
    );
    const flags = await startFlags();
    assert.ok(!flags.some((f) => f === "-A" || f.startsWith("--allow-all")), flags.join(" "));
    // Started as deno task start starts it: its flags, from the repository root.
    await using gateway = spawnSwitchyard({ args: ["--config", `${dir.relative}/config.json`] });
    try {
      const port = Number(new URL(await gateway.url()).port);
      const cases: [string, string, Record<string, unknown>][] = [
        ["/v1/chat/completions", "/v1/chat/completions", {
          model: "chat",
          messages: [{ role: "system", content: PADDING }, { role: "user", content: "Hello?" }],
        }],
        ["/v1/moderations", "/v1/moderations", { model: "mod", input: PADDING }],
        ["/v1/chat/completions", "/v1/chat/completions", {
          model: "chat",
          stream: true,
          messages: [{ role: "system", content: PADDING }, { role: "user", content: "Hello?" }],
        }],
      ];
      for (const [path, upstreamPath, body] of cases) {
        const text = JSON.stringify(body);
        assert.ok(text.length > 10_000);
        const before = upstream.closes.length;
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        const bytes = new TextEncoder().encode(
          `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
            `content-length: ${text.length}\r\n\r\n${text}`,
        );
        for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
        await new Promise((r) => setTimeout(r, 1000));
        assert.equal(upstream.closes.length, before, `${path}: the upstream call was still open`);
        conn.close();
        const left = performance.now();
        for (let i = 0; upstream.closes.length === before && i < 100; i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        const closed = upstream.closes[before];
        assert.ok(
          closed,
          `${path} (${
            body.stream ? "stream" : "non-stream"
          }): the upstream connection was not closed within 2 s`,
        );
        assert.equal(closed.path, upstreamPath);
        assert.ok(closed.closedAt - left < 2000, `closed after ${closed.closedAt - left} ms`);
      }
    } finally {
      await gateway[Symbol.asyncDispose]();
      await upstream.close();
      await dir.remove();
    }
  },
});
