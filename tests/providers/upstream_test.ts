import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import {
  isRetryableStatus,
  mapStreamError,
  mapUpstreamStatus,
  retryAfterMs,
  Upstream,
  type UpstreamErrorDetail,
} from "../../src/providers/upstream.ts";
import { providerDeps } from "../support/provider_call.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const said = (message: string, extra: Partial<UpstreamErrorDetail> = {}): UpstreamErrorDetail => ({
  message,
  type: null,
  code: null,
  param: null,
  ...extra,
});
const none = new Headers();

Deno.test("mapUpstreamStatus: the fault table of DESIGN §6", () => {
  const row = (status: number, detail = said("upstream text"), headers = none) => {
    const e = mapUpstreamStatus("p", status, detail, headers, NOW, { id: "gw", upstream: "up-1" });
    return [e.status, e.type, e.code];
  };
  assert.deepEqual(row(429), [429, "rate_limit_error", "rate_limit_exceeded"]);
  assert.deepEqual(row(429, said("q", { code: "insufficient_quota" })), [
    429,
    "rate_limit_error",
    "insufficient_quota",
  ]);
  assert.deepEqual(row(400), [400, "invalid_request_error", null]);
  assert.deepEqual(row(422), [400, "invalid_request_error", null]);
  assert.deepEqual(row(413), [413, "invalid_request_error", "request_too_large"]);
  for (const status of [401, 403, 404, 408, 409, 500, 502, 503, 504, 529]) {
    assert.deepEqual(row(status), [502, "upstream_error", "upstream_error"], `HTTP ${status}`);
  }
});

Deno.test("mapUpstreamStatus: a 400 keeps the upstream's message, code and param, with our model id", () => {
  const e = mapUpstreamStatus(
    "p",
    400,
    said("This model's maximum context length for up-1 is 8192 tokens.", {
      code: "context_length_exceeded",
      param: "messages",
    }),
    none,
    NOW,
    { id: "gw", upstream: "up-1" },
  );
  assert.equal(e.message, "This model's maximum context length for gw is 8192 tokens.");
  assert.equal(e.code, "context_length_exceeded");
  assert.equal(e.param, "messages");
});

Deno.test("mapUpstreamStatus: 401/403 never repeat the upstream's message", () => {
  for (const status of [401, 403]) {
    const e = mapUpstreamStatus(
      "p",
      status,
      said("Incorrect API key provided: sk-abc123"),
      none,
      NOW,
    );
    assert.ok(!e.message.includes("sk-abc123"));
    assert.match(e.message, /credentials/);
  }
});

Deno.test("mapUpstreamStatus: 429 passes a retry-after in whole seconds", () => {
  const e = (h: Record<string, string>) =>
    new Headers(mapUpstreamStatus("p", 429, said("slow down"), new Headers(h), NOW).headers)
      .get("retry-after");
  assert.equal(e({ "retry-after": "12" }), "12");
  assert.equal(e({ "retry-after-ms": "1500" }), "2");
  assert.equal(e({ "retry-after": new Date(NOW + 30_000).toUTCString() }), "30");
  assert.equal(e({}), null);
});

Deno.test("retryAfterMs reads retry-after-ms, seconds and HTTP dates; ignores nonsense", () => {
  const h = (init: Record<string, string>) => retryAfterMs(new Headers(init), NOW);
  assert.equal(h({ "retry-after-ms": "250", "retry-after": "9" }), 250);
  assert.equal(h({ "retry-after": "2" }), 2000);
  assert.equal(h({ "retry-after": "0.5" }), 500);
  assert.equal(h({ "retry-after": new Date(NOW + 4000).toUTCString() }), 4000);
  assert.equal(h({ "retry-after": new Date(NOW - 4000).toUTCString() }), 0);
  assert.equal(h({ "retry-after": "soon" }), null);
  assert.equal(h({ "retry-after": "-3" }), null);
  assert.equal(h({}), null);
});

Deno.test("isRetryableStatus: 429 and 5xx (529 included) only", () => {
  assert.deepEqual(
    [400, 401, 403, 404, 408, 413, 429, 500, 502, 503, 529].filter(isRetryableStatus),
    [429, 500, 502, 503, 529],
  );
});

Deno.test("mapStreamError: mid-stream errors keep the upstream's kind and drop the key", () => {
  const e = mapStreamError(
    "p",
    said("Overloaded sk-secret", { type: "overloaded_error" }),
    "sk-secret",
  );
  assert.equal(e.status, 502);
  assert.equal(e.type, "upstream_error");
  assert.match(e.message, /overloaded_error/);
  assert.ok(!e.message.includes("sk-secret"));
  const r = mapStreamError("p", said("slow", { type: "rate_limit_error" }), null);
  assert.deepEqual([r.status, r.type, r.code], [429, "rate_limit_error", "rate_limit_exceeded"]);
});

/** An upstream whose SSE body sends `events` events `gapMs` apart, or stalls after `stallAfter`;
 * like fetch, aborting the call errors the body. */
function dripping(timeoutMs: number, events: number, gapMs: number, stallAfter = Infinity) {
  const deps = providerDeps("openai", "http://upstream.test/v1", null, { timeout_ms: timeoutMs });
  let aborted = false;
  deps.fetch = (_input, init) => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        init?.signal?.addEventListener("abort", () => {
          aborted = true;
          controller.error(init.signal!.reason);
        });
      },
      async pull(controller) {
        if (sent >= stallAfter) return await new Promise(() => {});
        await new Promise((r) => setTimeout(r, gapMs));
        controller.enqueue(new TextEncoder().encode(`data: ${sent++}\n\n`));
        if (sent === events) controller.close();
      },
    });
    return Promise.resolve(new Response(body));
  };
  const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
  const call = () =>
    upstream.call({
      method: "POST",
      path: "/chat/completions",
      body: {},
      signal: new AbortController().signal,
      requestId: "req_1",
      stream: true,
    });
  return { call, aborted: () => aborted };
}

Deno.test("a stream's deadline restarts with every read: a long stream of timely reads ends well", async () => {
  // 12 reads 20 ms apart: 240 ms in all, more than the 150 ms deadline, but never a gap of it.
  const { call, aborted } = dripping(150, 12, 20);
  const response = await call();
  const data: string[] = [];
  for (let events = await response.readEvents(); events; events = await response.readEvents()) {
    data.push(...events.map((e) => e.data));
  }
  assert.equal(data.length, 12);
  assert.equal(aborted(), false, "a stream read to its end is not aborted");
});

Deno.test("a stream that stalls for the deadline is a 504 and its call is aborted", async () => {
  const { call, aborted } = dripping(100, 12, 5, 3);
  const response = await call();
  const data: string[] = [];
  await assert.rejects(
    (async () => {
      for (let events = await response.readEvents(); events; events = await response.readEvents()) {
        data.push(...events.map((e) => e.data));
      }
    })(),
    (e) => e instanceof ApiError && e.status === 504,
  );
  assert.deepEqual(data, ["0", "1", "2"]);
  assert.ok(aborted());
});
