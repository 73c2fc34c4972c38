import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import type { ProviderConfig } from "../../src/config.ts";
import {
  boundedDetail,
  type UpstreamErrorDetail,
} from "../../src/providers/upstream/error_detail.ts";
import { mapStreamError, mapUpstreamStatus } from "../../src/providers/upstream/error_mapping.ts";
import { isRetryableStatus } from "../../src/providers/upstream/retry.ts";
import { Upstream } from "../../src/providers/upstream/upstream.ts";
import { retryAfterMs } from "../../src/providers/upstream/retry_after.ts";
import { providerDeps } from "../support/provider_call.ts";
import { gatewayError } from "../support/rejection.ts";
import { waitFor } from "../support/wait.ts";
import { FetchHttpClient } from "../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../src/http/client/native.ts";
import { answer, RawServer } from "../http/client/raw_server.ts";

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
  assert.deepEqual(row(400), [400, "invalid_request_error", "upstream_invalid_request"]);
  assert.deepEqual(row(422), [400, "invalid_request_error", "upstream_invalid_request"]);
  assert.deepEqual(row(400, said("bad", { type: "invalid_request_error" })), [
    400,
    "invalid_request_error",
    "invalid_request_error",
  ]);
  assert.deepEqual(row(413), [413, "invalid_request_error", "request_too_large"]);
  for (const status of [401, 403, 404, 408, 409, 500, 502, 503]) {
    assert.deepEqual(row(status), [502, "upstream_error", "upstream_error"], `HTTP ${status}`);
  }
  // Whatever the upstream's style: an overload is a 503 (Anthropic's 529 on /v1/messages), the
  // upstream's own gateway timeout a 504, as the gateway's own deadline is.
  assert.deepEqual(row(529), [503, "upstream_error", "upstream_overloaded"]);
  assert.deepEqual(row(504), [504, "upstream_error", "upstream_timeout"]);
});

Deno.test("mapUpstreamStatus: an overloaded upstream is Anthropic's own 529 on the Messages door", () => {
  const busy = (headers: Record<string, string> = {}) =>
    mapUpstreamStatus(
      "p",
      529,
      said("Overloaded", { type: "overloaded_error" }),
      new Headers(headers),
      NOW,
    );
  const e = busy();
  assert.match(e.message, /"p" is overloaded \(HTTP 529 overloaded_error\)/);
  assert.equal(e.inStyle("openai"), e);
  const anthropic = e.inStyle("anthropic");
  assert.equal(anthropic.status, 529);
  assert.deepEqual(anthropic.toAnthropicBody(), {
    type: "error",
    error: { type: "overloaded_error", message: e.message },
  });
  assert.equal(e.toAnthropicBody().error.type, "overloaded_error");
  assert.equal(e.headers, undefined);
  assert.equal(new Headers(busy({ "retry-after": "7" }).headers).get("retry-after"), "7");
  assert.equal(
    new Headers(busy({ "retry-after": "7" }).inStyle("anthropic").headers).get("retry-after"),
    "7",
  );
  // Every other error keeps its status on the Messages door.
  const other = mapUpstreamStatus("p", 500, said("x"), none, NOW);
  assert.equal(other.inStyle("anthropic"), other);
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

Deno.test("mapUpstreamStatus: the upstream model is renamed only where it stands as a name", () => {
  const rename = (message: string, upstream: string) =>
    mapUpstreamStatus("p", 400, said(message), none, NOW, { id: "gw-id", upstream }).message;
  assert.equal(rename("fake 400 from fa.", "fa"), "fake 400 from gw-id.");
  assert.equal(
    rename("model 'gpt-4o' (not gpt-4o-mini) failed", "gpt-4o"),
    "model 'gw-id' (not gpt-4o-mini) failed",
  );
  assert.equal(
    rename("models/gemini-2.5-pro is unknown", "gemini-2.5"),
    "models/gemini-2.5-pro is unknown",
  );
  assert.equal(rename("a+b? is odd", "a+b?"), "gw-id is odd");
  assert.equal(rename("too long for up-1: 9 > 8", "up-1"), "too long for gw-id: 9 > 8");
  assert.equal(rename("no llama3:8b here", "llama3"), "no llama3:8b here");
  assert.equal(rename("models/gemini-up is not found", "gemini-up"), "models/gw-id is not found");
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
  // Without one: the rate-limit resets (OpenAI's durations, Anthropic's times), else 1 s.
  assert.equal(e({}), "1");
  assert.equal(e({ "x-ratelimit-reset-requests": "6m0s" }), "360");
  assert.equal(
    e({
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "1.5s",
      "x-ratelimit-remaining-tokens": "8000",
      "x-ratelimit-reset-tokens": "6m0s",
    }),
    "2",
    "the window with nothing left",
  );
  assert.equal(
    e({ "x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "1m30.2s" }),
    "91",
    "none says which: the latest",
  );
  assert.equal(
    e({
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": new Date(NOW + 12_000).toISOString(),
      "anthropic-ratelimit-tokens-remaining": "5000",
      "anthropic-ratelimit-tokens-reset": new Date(NOW + 50_000).toISOString(),
    }),
    "12",
  );
  assert.equal(e({ "retry-after": "4", "x-ratelimit-reset-requests": "6m0s" }), "4");
  // Quota is not a wait: no retry-after.
  const quota = mapUpstreamStatus("p", 429, said("q", { code: "insufficient_quota" }), none, NOW);
  assert.equal(quota.headers, undefined);
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

Deno.test("isRetryableStatus: what the official SDKs retry, 408, 409, 429 and 5xx (529 included)", () => {
  assert.deepEqual(
    [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529].filter(
      isRetryableStatus,
    ),
    [408, 409, 429, 500, 502, 503, 504, 529],
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

/** A chat call's request to an upstream, streamed or not. */
const chatRequest = (stream: boolean) => ({
  method: "POST" as const,
  path: "/chat/completions",
  body: {},
  signal: new AbortController().signal,
  requestId: "req_1",
  stream,
});

/** An upstream whose SSE body sends `events` events `gapMs` apart, or stalls after `stallAfter`
 * (with `comments`, sends only a keep-alive comment every `gapMs` from then on); like fetch,
 * aborting the call errors the body. */
function dripping(
  timeoutMs: number,
  events: number,
  gapMs: number,
  stallAfter = Infinity,
  comments = false,
) {
  const deps = providerDeps("openai", "http://upstream.test/v1", null, { timeout_ms: timeoutMs });
  let aborted = false;
  deps.http = new FetchHttpClient((_input, init) => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        init?.signal?.addEventListener("abort", () => {
          aborted = true;
          controller.error(init.signal!.reason);
        });
      },
      async pull(controller) {
        if (sent >= stallAfter && comments) {
          await new Promise((r) => setTimeout(r, gapMs));
          return controller.enqueue(new TextEncoder().encode(": keep-alive\n\n"));
        }
        if (sent >= stallAfter) return await new Promise(() => {});
        await new Promise((r) => setTimeout(r, gapMs));
        controller.enqueue(new TextEncoder().encode(`data: ${sent++}\n\n`));
        if (sent === events) controller.close();
      },
    });
    return Promise.resolve(new Response(body));
  });
  const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
  const call = () => upstream.call(chatRequest(true));
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

Deno.test("a client that asks for each read later than the deadline still gets the whole stream", async () => {
  // Reads come 20 ms apart, but the consumer (our client) waits 250 ms before asking for the
  // next one: the 150 ms deadline counts only the waits for the upstream.
  const { call, aborted } = dripping(150, 6, 20);
  const response = await call();
  const data: string[] = [];
  for (let events = await response.readEvents(); events; events = await response.readEvents()) {
    data.push(...events.map((e) => e.data));
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.deepEqual(data, ["0", "1", "2", "3", "4", "5"]);
  assert.equal(aborted(), false);
});

Deno.test("a slow client does not hide a silent upstream: the read it asks for still times out", async () => {
  const { call, aborted } = dripping(100, 12, 5, 3);
  const response = await call();
  const data: string[] = [];
  await assert.rejects(
    (async () => {
      for (let events = await response.readEvents(); events; events = await response.readEvents()) {
        data.push(...events.map((e) => e.data));
        await new Promise((r) => setTimeout(r, 150));
      }
    })(),
    (e) => e instanceof ApiError && e.status === 504 && e.code === "upstream_timeout",
  );
  assert.deepEqual(data, ["0", "1", "2"]);
  assert.ok(aborted());
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

Deno.test("boundedDetail cuts quoted values to 100 characters and the message to 1,000", () => {
  const long = "p".repeat(300);
  const detail = boundedDetail(
    said(`Invalid 'messages[0]': input_value='${long}' (the model's limit); see "${long}`, {
      type: "invalid_request_error",
      code: "bad value with spaces",
      param: long,
    }),
    null,
  );
  assert.equal(
    detail.message,
    `Invalid 'messages[0]': input_value='${"p".repeat(99)}…' (the model's limit); see "${
      "p".repeat(99)
    }…`,
  );
  assert.equal(detail.type, "invalid_request_error");
  assert.equal(detail.code, null, "a code that is not an identifier is dropped");
  assert.equal(detail.param, `${"p".repeat(99)}…`);
  const huge = boundedDetail(said("word ".repeat(1000)), null).message!;
  assert.equal(huge.length, 1000);
  assert.ok(huge.endsWith("…"));
});

Deno.test("boundedDetail removes the secret everywhere, before cutting", () => {
  const secret = "sk-secret-0123456789";
  const detail = boundedDetail(
    said(`${"x".repeat(990)} ${secret}`, { type: secret, code: "code_1", param: secret }),
    secret,
  );
  assert.ok(!JSON.stringify(detail).includes("sk-secret"));
  assert.equal(detail.type, null);
  assert.equal(detail.code, "code_1");
  assert.equal(detail.param, "[redacted]");
});

const encoder = new TextEncoder();

/** A body that never ends: `head`, then `piece` again and again; counts what was pulled
 * (one piece more than was read: a stream keeps one in its queue). */
function endless(head: string, piece: string) {
  let pulled = 0;
  let cancelled = false;
  const bytes = encoder.encode(piece);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(head));
    },
    pull(controller) {
      pulled += bytes.length;
      controller.enqueue(bytes.slice());
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

Deno.test("keep-alive comments do not hold a stream past its deadline: only an event restarts it", async () => {
  // A comment every 20 ms after 3 events: the upstream says nothing for 100 ms all the same.
  const { call, aborted } = dripping(100, 12, 20, 3, true);
  const response = await call();
  const data: string[] = [];
  const started = performance.now();
  await assert.rejects(
    (async () => {
      for (let events = await response.readEvents(); events; events = await response.readEvents()) {
        data.push(...events.map((e) => e.data));
      }
    })(),
    (e) => e instanceof ApiError && e.status === 504 && e.code === "upstream_timeout",
  );
  assert.deepEqual(data, ["0", "1", "2"]);
  assert.ok(performance.now() - started < 2000, "cut within a few deadlines");
  assert.ok(aborted());
});

Deno.test("a stream whose chunked framing breaks is a 502 from the upstream, not a gateway bug", async () => {
  await using server = new RawServer(async (peer) => {
    await peer.request();
    await peer.send(
      answer("200 OK", ["content-type: text/event-stream", "transfer-encoding: chunked"]) +
        "a\r\ndata: 1\n\n\r\nzz\r\n",
    );
    await peer.clientClosed();
  });
  const deps = providerDeps("openai", server.url("/v1").replace(/\/$/, ""), null, {
    max_retries: 0,
  });
  deps.http = new NativeHttpClient();
  const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
  const { data, error } = await readUntilError(upstream, chatRequest(true));
  assert.ok(data.length <= 1, data.join());
  assert.equal(error.status, 502);
  assert.equal(error.code, "upstream_error");
  assert.match(deps.output.err, /malformed chunk size/);
});

/** An Upstream whose one answer is `response`, with `config` over the test defaults. */
function answering(response: Response, config: Partial<ProviderConfig> = {}) {
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-up", {
    max_retries: 0,
    max_response_bytes: 64 * 1024 * 1024,
    max_event_bytes: 8 * 1024 * 1024,
    ...config,
  });
  deps.http = new FetchHttpClient(() => Promise.resolve(response));
  const upstream = new Upstream(deps, {
    headers: {},
    parseError: (body) => {
      const error = (body as { error?: { message: string; type: string } }).error;
      return error ? said(error.message, { type: error.type }) : said("not JSON");
    },
  });
  return { upstream, request: chatRequest, deps };
}

Deno.test("a JSON answer over max_response_bytes is a 502, read no further than the limit", async () => {
  const body = endless('{"id": 1', " ".repeat(1000));
  const { upstream, request, deps } = answering(new Response(body.stream), {
    max_response_bytes: 8192,
  });
  const error = await gatewayError(() => upstream.json(request(false)));
  assert.equal(error.status, 502);
  assert.equal(error.code, "upstream_error");
  assert.match(error.message, /larger than the gateway accepts \(8192 bytes\)/);
  assert.ok(body.pulled() <= 8192 + 2 * 1000, `pulled ${body.pulled()}`);
  await waitFor(body.cancelled, "the body to be cancelled");
  assert.match(deps.output.err, /an answer over max_response_bytes \(8192 bytes\)/);
});

Deno.test("a content-length over max_response_bytes is a 502 before the body is read", async () => {
  const body = endless("{}", " ");
  const { upstream, request } = answering(
    new Response(body.stream, { headers: { "content-length": "100000" } }),
    { max_response_bytes: 8192 },
  );
  const error = await gatewayError(() => upstream.json(request(false)));
  assert.equal(error.status, 502);
  assert.equal(body.pulled(), 0);
});

/** Reads a stream's events until it throws; the data read before and the error. */
async function readUntilError(
  upstream: Upstream,
  request: Parameters<Upstream["call"]>[0],
): Promise<{ data: string[]; error: ApiError }> {
  const response = await upstream.call(request);
  const data: string[] = [];
  try {
    const error = await gatewayError(async () => {
      for (let events = await response.readEvents(); events; events = await response.readEvents()) {
        data.push(...events.map((e) => e.data));
      }
    });
    return { data, error };
  } finally {
    response.close();
  }
}

Deno.test("a stream over max_response_bytes ends in a 502 and its connection is cut", async () => {
  const body = endless("", "data: {}\n\n".repeat(10));
  const { upstream, request } = answering(new Response(body.stream), {
    max_response_bytes: 4096,
    max_event_bytes: 1024,
  });
  const { data, error } = await readUntilError(upstream, request(true));
  assert.equal(error.status, 502);
  assert.match(error.message, /an answer larger than the gateway accepts \(4096 bytes\)/);
  assert.ok(data.length > 0 && data.length <= 4096 / 10);
  await waitFor(body.cancelled, "the body to be cancelled");
});

Deno.test("a stream line that never ends is a 502 at max_event_bytes, and its connection is cut", async () => {
  const body = endless('data: {}\n\ndata: "', "x".repeat(1000));
  const { upstream, request } = answering(new Response(body.stream), { max_event_bytes: 4096 });
  const { data, error } = await readUntilError(upstream, request(true));
  assert.deepEqual(data, ["{}"]);
  assert.equal(error.status, 502);
  assert.match(error.message, /a stream event larger than the gateway accepts \(4096 bytes\)/);
  assert.ok(body.pulled() <= 4096 + 2 * 1000, `pulled ${body.pulled()}`);
  await waitFor(body.cancelled, "the body to be cancelled");
});

Deno.test("an error body is read no further than 64 KiB", async () => {
  const body = endless('{"error": {"message": "', "x".repeat(1000));
  const { upstream, request } = answering(new Response(body.stream, { status: 400 }));
  const error = await gatewayError(() => upstream.json(request(false)));
  assert.equal(error.status, 400);
  assert.match(error.message, /rejected the request \(HTTP 400\)|not JSON/);
  assert.ok(body.pulled() <= 64 * 1024 + 2 * 1000, `pulled ${body.pulled()}`);
  await waitFor(body.cancelled, "the body to be cancelled");
});

Deno.test("a warning repeats what the upstream said about a request only with include_content", async () => {
  const prompt = "my secret diary entry";
  for (const includeContent of [false, true]) {
    const { upstream, request, deps } = answering(
      Response.json({
        error: { message: `'${prompt}' is not allowed`, type: "invalid_request_error" },
      }, { status: 400 }),
    );
    deps.includeContent = includeContent;
    const error = await gatewayError(() => upstream.json(request(false)));
    assert.equal(error.message, `'${prompt}' is not allowed`, "the caller is told");
    assert.match(deps.output.err, /upstream answered HTTP 400 invalid_request_error/);
    assert.equal(deps.output.err.includes(prompt), includeContent);
  }
});

Deno.test("a compressed answer is a 502 that names the encoding, logged as such and not retried", async () => {
  let calls = 0;
  await using server = new RawServer(async (peer) => {
    calls++;
    await peer.request();
    await peer.send(
      answer("200 OK", ["content-type: application/json", "content-encoding: gzip"], "\x1f\x8b"),
    );
    await peer.clientClosed();
  });
  const deps = providerDeps("openai", server.url("/v1").replace(/\/$/, ""), null, {
    max_retries: 2,
  });
  deps.http = new NativeHttpClient();
  const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
  const error = await gatewayError(() => upstream.json(chatRequest(false)));
  assert.equal(error.status, 502);
  assert.equal(error.code, "upstream_error");
  assert.match(error.message, /Content-Encoding gzip/);
  assert.equal(calls, 1, "not retried: it would answer the same way");
  assert.match(deps.output.err, /refused the answer/);
  assert.doesNotMatch(deps.output.err, /could not connect/);
});
