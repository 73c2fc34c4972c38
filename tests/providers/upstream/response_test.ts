import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import { Upstream } from "../../../src/providers/upstream/upstream.ts";
import { answer, RawServer } from "../../http/client/raw_server.ts";
import { providerDeps } from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";
import { answering, chatRequest, endless, said } from "../../support/upstream_calls.ts";
import { waitFor } from "../../support/wait.ts";

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
