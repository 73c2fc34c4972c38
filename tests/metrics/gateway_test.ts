import assert from "node:assert/strict";
import parsePrometheus from "npm:parse-prometheus-text-format@1.1.1";
import { GatewayMetrics, type RequestSample } from "../../src/metrics/gateway.ts";

const memory = { rss: 100, heapTotal: 50, heapUsed: 40, external: 5 };

function metrics() {
  return new GatewayMetrics({
    open: () => ({ requests: 4, streams: 2 }),
    recordsNotStored: () => 7,
    memory: () => memory,
  });
}

const base: RequestSample = {
  route: "/v1/chat/completions",
  method: "POST",
  status: 200,
  model: "m",
  provider: "p",
  error: null,
  scope: "chat",
  streamBegan: false,
  seconds: 0.2,
  firstByteSeconds: 0.2,
  inputTokens: 10,
  outputTokens: 4,
  fallbacks: [],
};

/** Samples of `name` as [labels, value] pairs. */
function samples(text: string, name: string): [Record<string, string>, number][] {
  const family = parsePrometheus(text).find((f: { name: string }) => f.name === name);
  return (family?.metrics ?? []).map((m: { labels?: Record<string, string>; value: string }) => [
    m.labels ?? {},
    Number(m.value),
  ]);
}

Deno.test("GatewayMetrics: an upstream's failure, a limit's refusal and a client error count apart", () => {
  const m = metrics();
  m.request(base);
  m.request({ ...base, status: 502, error: "upstream_error", inputTokens: 0, outputTokens: 0 });
  m.request({
    ...base,
    status: 429,
    error: "rate_limit_exceeded",
    inputTokens: 0,
    outputTokens: 0,
  });
  m.request({
    ...base,
    status: 429,
    error: "rate_limit_exceeded",
    model: "",
    provider: null,
    inputTokens: 0,
    outputTokens: 0,
  });
  m.request({
    ...base,
    status: 400,
    error: "invalid_value",
    model: "",
    provider: null,
    inputTokens: 0,
    outputTokens: 0,
  });
  const text = m.render();
  assert.deepEqual(samples(text, "switchyard_upstream_errors_total"), [
    [{ provider: "p", kind: "upstream_error" }, 1],
    [{ provider: "p", kind: "rate_limit_exceeded" }, 1],
  ]);
  assert.deepEqual(samples(text, "switchyard_rate_limit_refusals_total"), [[{ scope: "chat" }, 1]]);
  assert.deepEqual(samples(text, "switchyard_http_requests_total"), [
    [{ route: "/v1/chat/completions", method: "POST", status_class: "2xx", model: "m" }, 1],
    [{ route: "/v1/chat/completions", method: "POST", status_class: "5xx", model: "m" }, 1],
    [{ route: "/v1/chat/completions", method: "POST", status_class: "4xx", model: "m" }, 1],
    [{ route: "/v1/chat/completions", method: "POST", status_class: "4xx", model: "" }, 2],
  ]);
  assert.deepEqual(samples(text, "switchyard_tokens_total"), [
    [{ model: "m", type: "input" }, 10],
    [{ model: "m", type: "output" }, 4],
  ]);
});

Deno.test("GatewayMetrics: first token only for streams that began; gauges read at scrape", () => {
  const m = metrics();
  m.request({ ...base, streamBegan: true, firstByteSeconds: 0.03 });
  m.request({ ...base, firstByteSeconds: 0.5 });
  m.request({ ...base, firstByteSeconds: null });
  const text = m.render();
  assert.match(text, /^switchyard_time_to_first_token_seconds_count\{model="m"\} 1$/m);
  assert.match(text, /^switchyard_time_to_first_token_seconds_bucket\{model="m",le="0.05"\} 1$/m);
  assert.match(
    text,
    /^switchyard_http_time_to_first_byte_seconds_count\{route="\/v1\/chat\/completions"\} 2$/m,
  );
  assert.match(
    text,
    /^switchyard_http_request_duration_seconds_count\{route="\/v1\/chat\/completions"\} 3$/m,
  );
  assert.deepEqual(samples(text, "switchyard_requests_in_flight"), [[{}, 4]]);
  assert.deepEqual(samples(text, "switchyard_active_streams"), [[{}, 2]]);
  assert.deepEqual(samples(text, "switchyard_log_records_not_stored"), [[{}, 7]]);
  assert.deepEqual(samples(text, "process_resident_memory_bytes"), [[{}, 100]]);
  assert.deepEqual(samples(text, "deno_memory_heap_bytes"), [
    [{ kind: "used" }, 40],
    [{ kind: "total" }, 50],
    [{ kind: "external" }, 5],
  ]);
});
