/**
 * The whole gateway in one process, without the network: 32 concurrent chat requests through
 * `app.handler` (auth with an API key, the rate limit counted on a KV file, validation, the
 * OpenAI adapter, logging to KV) against canned upstream answers. Per iteration, so divide by
 * 32 for one request; each also with metrics on (a metrics token set), against the same app with
 * them off. `deno task bench:micro`.
 */
import { createApp } from "../src/app.ts";
import { KeyStore } from "../src/auth/keys.ts";
import { systemClock } from "../src/clock.ts";
import { parseConfig } from "../src/config/parse.ts";
import { cannedOpenAIFetch, chatBody } from "./fixtures.ts";
import { FetchHttpClient } from "../src/http/client/fetch.ts";

const dir = await Deno.makeTempDir({ prefix: "switchyard-handler-bench-" });
const path = `${dir}/kv.sqlite`;
const kv = await Deno.openKv(path);
const high = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };
const { key } = await new KeyStore(kv, systemClock).create({
  name: "bench",
  limits: { chat: high, other: high, images: high },
});
const config = parseConfig({
  server: { hostname: "127.0.0.1", port: 0 },
  kv: { path },
  providers: [{
    id: "bench",
    style: "openai",
    base_url: "http://upstream.invalid/v1",
    api_key_env: "BENCH_UPSTREAM_KEY",
    max_retries: 0,
  }],
  models: [{ id: "bench-openai", provider: "bench", chat_completions: true, access: "key" }],
}, "bench");
const upstream = cannedOpenAIFetch(20);
/** The app, with metrics on when `metricsToken` is given. */
function app(metricsToken?: string) {
  const env: Record<string, string> = { BENCH_UPSTREAM_KEY: "sk-upstream" };
  if (metricsToken) env.SWITCHYARD_METRICS_TOKEN = metricsToken;
  return createApp({
    config,
    kv,
    env: (name) => env[name],
    http: new FetchHttpClient(upstream),
    output: { stdout() {}, stderr() {} },
  });
}
const apps = { "metrics off": await app(), "metrics on": await app("bench-metrics") };
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo;

function request(body: string): Request {
  return new Request("http://127.0.0.1:8000/v1/chat/completions", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "content-length": String(body.length),
      authorization: `Bearer ${key}`,
    },
    body,
  });
}

for (const streaming of [false, true]) {
  const body = chatBody("bench-openai", streaming);
  const mode = streaming ? "stream of 20 chunks" : "non-stream";
  for (const [label, built] of Object.entries(apps)) {
    Deno.bench(
      `chat through app.handler, ${mode}: 32 at once, ${label}`,
      { group: `handler ${mode}`, baseline: label === "metrics off" },
      async () => {
        await Promise.all(Array.from({ length: 32 }, async () => {
          const response = await built.handler(request(body), info);
          await response.text();
        }));
      },
    );
  }
}

globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(dir, { recursive: true });
});
