/** `GET /metrics` over a real port, parsed by a Prometheus text-format parser from npm. */
import assert from "node:assert/strict";
import parsePrometheus from "npm:parse-prometheus-text-format@1.1.1";
import type { CanonicalEvent } from "../src/canonical/events.ts";
import type { Provider } from "../src/providers/types.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { eventually } from "./support/eventually.ts";
import { postJson } from "./support/http.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

const METRICS_TOKEN = "metrics-test-0b1c2d3e4f5a6b7c";

/** A gateway with the admin API, a metrics token, anonymous chat at 6 a minute and a model
 * whose upstream cannot be reached. */
function startMetricsServer(
  patch: (raw: Record<string, unknown>) => void = () => {},
  providers?: ReadonlyMap<string, Provider>,
): Promise<TestServer> {
  const env: Record<string, string> = {
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN,
  };
  return startServer({
    config: testConfig((raw) => {
      raw.metrics = { token_env: "SWITCHYARD_METRICS_TOKEN" };
      raw.limits = { anonymous: { chat: { per_minute: 6, per_day: 1000 } } };
      (raw.providers as unknown[]).push({
        id: "down",
        style: "openai",
        base_url: "http://127.0.0.1:9/v1",
        max_retries: 0,
      });
      (raw.models as unknown[]).push({
        id: "down-chat",
        provider: "down",
        upstream_model: "gpt-x",
        chat_completions: true,
      });
      patch(raw);
    }),
    env: (name) => env[name],
    ...(providers ? { providers } : {}),
  });
}

/** A simulator stand-in whose streams send one piece of text, then wait for the caller to
 * leave. */
const heldStream: Provider = {
  id: "sim",
  chat: () => Promise.reject(new Error("not used")),
  chatStream: async function* (_req, call): AsyncIterable<CanonicalEvent[]> {
    yield [{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }];
    yield [{ type: "block_delta", index: 0, delta: { type: "text", text: "Held open." } }];
    await new Promise((_, reject) =>
      call.signal.addEventListener("abort", () => reject(call.signal.reason), { once: true })
    );
  },
};

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The exposition parsed: counter and gauge samples by metric name. */
async function scrape(server: TestServer, token = METRICS_TOKEN) {
  const res = await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  const families = parsePrometheus(text) as {
    name: string;
    type: string;
    metrics: { labels?: Record<string, string>; value?: string }[];
  }[];
  const samples = new Map<string, Sample[]>();
  const types = new Map<string, string>();
  for (const family of families) {
    types.set(family.name, family.type);
    samples.set(
      family.name,
      family.metrics.filter((m) => m.value !== undefined).map((m) => ({
        labels: m.labels ?? {},
        value: Number(m.value),
      })),
    );
  }
  /** The sum of a metric's samples whose labels include `where`. */
  const sum = (name: string, where: Record<string, string> = {}): number =>
    (samples.get(name) ?? [])
      .filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v))
      .reduce((n, s) => n + s.value, 0);
  /** A histogram series' `_count`, read from the text (the parser merges labelled series). */
  const histogramCount = (name: string, labels: string): number => {
    const line = text.split("\n").find((l) => l.startsWith(`${name}_count{${labels}} `));
    return line === undefined ? 0 : Number(line.split(" ")[1]);
  };
  return { text, types, samples, sum, histogramCount };
}

const chat = (server: TestServer, body: Record<string, unknown>) =>
  postJson(`${server.url}/v1/chat/completions`, {
    messages: [{ role: "user", content: "Say something about metrics." }],
    ...body,
  });

Deno.test("/metrics: the admin token or the metrics token, nothing else", async () => {
  await using server = await startMetricsServer();
  for (const authorization of [null, "Bearer wrong", `Basic ${btoa("a:b")}`]) {
    const res = await fetch(`${server.url}/metrics`, {
      headers: authorization ? { authorization } : {},
    });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "invalid_api_key");
  }
  await scrape(server, METRICS_TOKEN);
  await scrape(server, ADMIN_TOKEN);
});

Deno.test("/metrics: wrong tokens count with the admin API's, 10 a minute per IP, then 429 for any token", async () => {
  await using server = await startMetricsServer();
  const get = async (path: string, token: string) => {
    const res = await fetch(`${server.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await res.json().catch(() => null);
    return { status: res.status, body, retryAfter: res.headers.get("retry-after") };
  };
  for (let i = 0; i < 6; i++) assert.equal((await get("/metrics", `guess-${i}`)).status, 401);
  for (let i = 0; i < 4; i++) assert.equal((await get("/admin/keys", `guess-${i}`)).status, 401);
  for (const token of [METRICS_TOKEN, ADMIN_TOKEN]) {
    const refused = await get("/metrics", token);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.type, "rate_limit_error");
    assert.ok(Number(refused.retryAfter) >= 1);
  }
  assert.equal((await get("/admin/keys", ADMIN_TOKEN)).status, 429);
});

Deno.test("/metrics: not served when metrics are off, nor without any token", async () => {
  await using off = await startMetricsServer((raw) => {
    raw.metrics = { enabled: false, token_env: "SWITCHYARD_METRICS_TOKEN" };
  });
  const res = await fetch(`${off.url}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  assert.equal(res.status, 404);
  await res.body?.cancel();
  await using tokenless = await startServer();
  const none = await fetch(`${tokenless.url}/metrics`);
  assert.equal(none.status, 404);
  await none.body?.cancel();
});

Deno.test("/metrics: counters move by exactly the requests made", async () => {
  await using server = await startMetricsServer();
  const before = await scrape(server);
  for (const name of before.types.keys()) assert.match(name, /^(switchyard|process|deno)_/);
  assert.equal(before.types.get("switchyard_http_requests_total"), "COUNTER");
  assert.equal(before.types.get("switchyard_http_request_duration_seconds"), "HISTOGRAM");
  assert.equal(before.types.get("switchyard_active_streams"), "GAUGE");
  assert.ok(before.sum("process_resident_memory_bytes") > 0);
  assert.ok(before.sum("deno_memory_heap_bytes", { kind: "used" }) > 0);

  let input = 0;
  let output = 0;
  for (let i = 0; i < 2; i++) {
    const res = await chat(server, { model: "sim-chat", max_tokens: 20 });
    assert.equal(res.status, 200);
    const { usage } = await res.json();
    input += usage.prompt_tokens;
    output += usage.completion_tokens;
  }
  const streamed = await chat(server, {
    model: "sim-chat",
    max_tokens: 20,
    stream: true,
    stream_options: { include_usage: true },
  });
  const events = (await streamed.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
  const last = JSON.parse(events.at(-1)!.slice(6));
  input += last.usage.prompt_tokens;
  output += last.usage.completion_tokens;
  const unknown = await chat(server, { model: "no-such-model" });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
  const down = await chat(server, { model: "down-chat" });
  assert.equal(down.status, 502);
  await down.body?.cancel();
  // Five chat requests so far; the limit is 6 a minute: one more passes, two are refused.
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${server.url}/v1/models/sim-chat`);
    statuses.push(res.status);
    await res.body?.cancel();
    const limited = await chat(server, { model: "sim-chat", max_tokens: 5 });
    statuses.push(limited.status);
    const body = await limited.json();
    if (limited.status === 200) {
      input += body.usage.prompt_tokens;
      output += body.usage.completion_tokens;
    }
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 200, 429]);

  const after = await scrape(server);
  const delta = (name: string, where: Record<string, string> = {}) =>
    after.sum(name, where) - before.sum(name, where);
  const chatRoute = { route: "/v1/chat/completions" };
  assert.equal(delta("switchyard_http_requests_total", chatRoute), 8);
  assert.equal(
    delta("switchyard_http_requests_total", {
      ...chatRoute,
      status_class: "2xx",
      model: "sim-chat",
    }),
    4,
  );
  assert.equal(
    delta("switchyard_http_requests_total", { ...chatRoute, status_class: "4xx", model: "" }),
    3,
    "an unknown model and the refusals are not labelled with the model asked for",
  );
  assert.equal(
    delta("switchyard_http_requests_total", {
      ...chatRoute,
      status_class: "5xx",
      model: "down-chat",
    }),
    1,
  );
  assert.equal(
    delta("switchyard_http_requests_total", { route: "/v1/models/:id", method: "GET" }),
    3,
  );
  assert.equal(delta("switchyard_http_requests_total", { route: "/metrics" }), 1);
  assert.equal(delta("switchyard_tokens_total", { model: "sim-chat", type: "input" }), input);
  assert.equal(delta("switchyard_tokens_total", { model: "sim-chat", type: "output" }), output);
  assert.equal(
    delta("switchyard_upstream_errors_total", { provider: "down", kind: "upstream_error" }),
    1,
  );
  assert.equal(delta("switchyard_rate_limit_refusals_total", { scope: "chat" }), 2);
  assert.equal(after.sum("switchyard_active_streams"), 0);
  assert.equal(after.sum("switchyard_requests_in_flight"), 1, "the scrape itself");
  const route = 'route="/v1/chat/completions"';
  assert.equal(
    after.histogramCount("switchyard_http_request_duration_seconds", route) -
      before.histogramCount("switchyard_http_request_duration_seconds", route),
    8,
  );
  assert.equal(
    after.histogramCount("switchyard_time_to_first_token_seconds", 'model="sim-chat"') -
      before.histogramCount("switchyard_time_to_first_token_seconds", 'model="sim-chat"'),
    1,
    "one stream",
  );
  assert.ok(
    after.histogramCount("switchyard_kv_commit_duration_seconds", 'store="ratelimit"') > 0,
  );
  await server.app.services.logger.flush();
  const flushed = await scrape(server);
  assert.ok(
    flushed.histogramCount("switchyard_kv_commit_duration_seconds", 'store="log"') > 0,
    "the log sink's commits are timed",
  );
});

Deno.test("/metrics: an open stream is counted as active until it ends", async () => {
  await using server = await startMetricsServer(undefined, new Map([["sim", heldStream]]));
  const res = await chat(server, { model: "sim-chat", stream: true });
  const reader = res.body!.getReader();
  await reader.read();
  const during = await scrape(server);
  assert.equal(during.sum("switchyard_active_streams"), 1);
  assert.equal(during.sum("switchyard_requests_in_flight"), 2, "the stream and the scrape");
  await reader.cancel();
  const after = await eventually(async () => {
    const now = await scrape(server);
    return now.sum("switchyard_active_streams") === 0 ? now : undefined;
  }, "the stream to end");
  assert.equal(after.sum("switchyard_tokens_total", { model: "sim-chat", type: "output" }), 3);
});
