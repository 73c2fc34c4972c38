/**
 * Micro-benchmarks of the metrics: what one settled request adds (the settle hook's update of
 * the counters and histograms), a scrape of a realistic exposition, and a KV commit with and
 * without its timing. `deno task bench:micro`.
 */
import { GatewayMetrics, type RequestSample } from "../src/metrics/gateway.ts";
import { timed } from "../src/kv/timed.ts";

const memory = Deno.memoryUsage();
const metrics = new GatewayMetrics({
  open: () => ({ requests: 3, streams: 1 }),
  recordsNotStored: () => 0,
  memory: () => memory,
});
const sample = (i: number): RequestSample => ({
  route: "/v1/chat/completions",
  method: "POST",
  status: i % 50 === 0 ? 429 : 200,
  model: `model-${i % 8}`,
  provider: "bench",
  error: i % 50 === 0 ? "rate_limit_exceeded" : null,
  scope: "chat",
  streamBegan: i % 2 === 0,
  seconds: (i % 1000) / 1000,
  firstByteSeconds: (i % 100) / 1000,
  inputTokens: 12,
  outputTokens: 7,
  fallbacks: [],
});
let n = 0;

Deno.bench("GatewayMetrics.request: one settled request", { group: "request" }, () => {
  metrics.request(sample(n++));
});

Deno.bench("GatewayMetrics.render: a scrape (8 models, all instruments)", () => {
  metrics.render();
});

const dir = await Deno.makeTempDir({ prefix: "switchyard-metrics-bench-" });
const kv = await Deno.openKv(`${dir}/kv.sqlite`);
let k = 0;

Deno.bench("KV commit", { group: "commit", baseline: true }, async () => {
  await kv.atomic().set(["bench", k++ % 100], k).commit();
});

Deno.bench("KV commit, timed", { group: "commit" }, async () => {
  await timed(kv.atomic().set(["bench", k++ % 100], k).commit(), () => {});
});

globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(dir, { recursive: true });
});
