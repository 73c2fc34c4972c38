/**
 * The gateway that tests/fuzz_test.ts fuzzes, run as a child process so that a request which
 * blocks the event loop or exhausts the heap cannot hang or crash the test itself (the test
 * kills and restarts this process instead).
 *
 * It serves the simulator providers and models of the default config (switchyard.json; the
 * upstream providers and their models are left out, so nothing leaves this machine) with rate
 * limits no fuzz run reaches, over an in-memory KV, with the admin API on. Once listening it
 * prints one JSON line to stdout: `{url, adminToken, previewKey, patchKeyId}`. Request records
 * are dropped; diagnostics (unhandled errors with their stacks) go to stderr.
 */
import { createApp } from "../../src/app.ts";
import { parseConfig } from "../../src/config/parse.ts";
import { randomBase62 } from "../../src/auth/keys.ts";

const HIGH = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };

const raw = JSON.parse(
  await Deno.readTextFile(new URL("../../switchyard.json", import.meta.url)),
) as Record<string, unknown>;
const providers = (raw.providers as { id: string; style: string }[])
  .filter((p) => p.style === "simulator");
const simulated = new Set(providers.map((p) => p.id));
raw.providers = providers;
raw.models = (raw.models as { provider: string }[]).filter((m) => simulated.has(m.provider));
raw.server = { ...(raw.server as object), hostname: "127.0.0.1", port: 0 };
raw.kv = { path: ":memory:" };
raw.limits = {
  ...(raw.limits as object),
  anonymous: { chat: HIGH, other: HIGH, images: HIGH },
  key: { chat: HIGH, other: HIGH, images: HIGH },
};
const config = parseConfig(raw, "switchyard.json (simulator only)");

const adminToken = `adm-fuzz-${randomBase62(24)}`;
const kv = await Deno.openKv(":memory:");
const encoder = new TextEncoder();
const app = await createApp({
  config,
  kv,
  env: (name) => (name === "SWITCHYARD_ADMIN_TOKEN" ? adminToken : undefined),
  output: {
    stdout: () => {},
    stderr: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
  },
});
const previewKey = (await app.services.keys.create({ name: "fuzz-preview", preview: true })).key;
const patchKeyId = (await app.services.keys.create({ name: "fuzz-patch-target" })).record.id;

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.handler);
const url = `http://127.0.0.1:${server.addr.port}`;
console.log(JSON.stringify({ url, adminToken, previewKey, patchKeyId }));

// The test ends this process with a signal; stdin closing (the test gone) ends it too.
for await (const _ of Deno.stdin.readable) { /* drain */ }
await server.shutdown();
await app.close();
kv.close();
