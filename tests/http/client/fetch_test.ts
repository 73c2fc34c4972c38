import assert from "node:assert/strict";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import type { ClientRequest } from "../../../src/http/client/types.ts";
import { within } from "./raw_server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A request with no headers and a signal nobody fires, `init` on top. */
function request(url: string, init: Partial<ClientRequest> = {}): ClientRequest {
  return { method: "GET", url, headers: {}, signal: new AbortController().signal, ...init };
}

/** A fetch that answers every call with `respond`'s response and keeps what it was given. */
function canned(respond: () => Response) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetchFn = ((input: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(input), init: init ?? {} });
    return Promise.resolve(respond());
  }) as typeof fetch;
  return { calls, fetchFn };
}

/** A stream of `pieces` that records whether it was cancelled. */
function pieces(parts: string[]) {
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(encoder.encode(next));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { state, stream };
}

Deno.test("FetchHttpClient sends the method, headers, body and signal it is given", async () => {
  const { calls, fetchFn } = canned(() => new Response("ok"));
  const client = new FetchHttpClient(fetchFn);
  const signal = new AbortController().signal;
  await client.request(
    request("http://upstream.test/v1", {
      method: "POST",
      headers: { "x-key": "k" },
      body: "héllo",
      signal,
    }),
  );
  await client.request(request("http://upstream.test/v2"));
  assert.equal(calls[0]?.url, "http://upstream.test/v1");
  assert.deepEqual(calls[0]?.init, {
    method: "POST",
    headers: { "x-key": "k", "accept-encoding": "identity" },
    signal,
    redirect: "manual",
    body: "héllo",
  });
  assert.equal("body" in calls[1]!.init, false, "no body given, none sent");
  client.close();
});

Deno.test("FetchHttpClient gives the status, the headers and a declared length", async () => {
  const client = new FetchHttpClient(
    canned(() =>
      new Response("12345", { status: 418, headers: { "x-answer": "yes", "content-length": "5" } })
    ).fetchFn,
  );
  const response = await client.request(request("http://upstream.test/"));
  assert.equal(response.status, 418);
  assert.equal(response.headers.get("x-answer"), "yes");
  assert.equal(response.length, 5);
  response.cancel();

  for (const declared of [null, "abc", "-1", "1.5"]) {
    const headers: Record<string, string> = declared === null ? {} : { "content-length": declared };
    const undeclared = await new FetchHttpClient(
      canned(() => new Response(pieces(["x"]).stream, { headers })).fetchFn,
    ).request(request("http://upstream.test/"));
    assert.equal(undeclared.length, null, String(declared));
    undeclared.cancel();
  }
});

Deno.test("FetchHttpClient reads a body piece by piece, and a missing body as none", async () => {
  const { stream } = pieces(["one ", "two ", "three"]);
  const client = new FetchHttpClient(canned(() => new Response(stream)).fetchFn);
  const response = await client.request(request("http://upstream.test/"));
  const read: string[] = [];
  for (let piece = await response.read(); piece !== null; piece = await response.read()) {
    read.push(decoder.decode(piece));
  }
  assert.equal(read.join(""), "one two three");
  assert.equal(await response.read(), null);

  const empty = await new FetchHttpClient(canned(() => new Response(null, { status: 204 })).fetchFn)
    .request(request("http://upstream.test/"));
  assert.equal(await empty.read(), null);
  assert.deepEqual(await empty.text(10), { text: "", complete: true });
});

Deno.test("FetchHttpClient text(maxBytes) reads a body whole within the limit and cuts a longer one", async () => {
  const whole = await new FetchHttpClient(canned(() => new Response("héllo")).fetchFn)
    .request(request("http://upstream.test/"));
  assert.deepEqual(await whole.text(6), { text: "héllo", complete: true });

  const { state, stream } = pieces(["0123456789", "0123456789", "0123456789"]);
  const long = await new FetchHttpClient(canned(() => new Response(stream)).fetchFn)
    .request(request("http://upstream.test/"));
  assert.deepEqual(await long.text(15), { text: "012345678901234", complete: false });
  await within(
    (async () => {
      while (!state.cancelled) await new Promise((r) => setTimeout(r, 1));
    })(),
    2000,
    "the cut body to be cancelled",
  );
});

Deno.test("FetchHttpClient.cancel cancels the body, read or not", async () => {
  const unread = pieces(["a", "b"]);
  const first = await new FetchHttpClient(canned(() => new Response(unread.stream)).fetchFn)
    .request(request("http://upstream.test/"));
  first.cancel();
  await within(
    (async () => {
      while (!unread.state.cancelled) await new Promise((r) => setTimeout(r, 1));
    })(),
    2000,
    "the unread body to be cancelled",
  );

  const started = pieces(["a", "b", "c"]);
  const second = await new FetchHttpClient(canned(() => new Response(started.stream)).fetchFn)
    .request(request("http://upstream.test/"));
  assert.equal(decoder.decode((await second.read())!), "a");
  second.cancel();
  await within(
    (async () => {
      while (!started.state.cancelled) await new Promise((r) => setTimeout(r, 1));
    })(),
    2000,
    "the body being read to be cancelled",
  );
});

Deno.test("FetchHttpClient over the real fetch: a POST's body, an answer read whole, and an abort", async () => {
  const release = Promise.withResolvers<void>();
  const seen: string[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (new URL(req.url).pathname === "/stall") {
      await release.promise;
      return new Response("late");
    }
    seen.push(`${req.method} ${req.headers.get("x-key")} ${await req.text()}`);
    return new Response("réponse", { headers: { "x-answer": "1" } });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const client = new FetchHttpClient();
  try {
    const response = await client.request(
      request(`${url}/echo`, { method: "POST", headers: { "x-key": "k" }, body: "corps ✓" }),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-answer"), "1");
    assert.equal(response.length, encoder.encode("réponse").length);
    assert.deepEqual(await response.text(100), { text: "réponse", complete: true });
    assert.deepEqual(seen, ["POST k corps ✓"]);

    const controller = new AbortController();
    const reason = new Error("stop");
    const stalled = client.request(request(`${url}/stall`, { signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 10));
    controller.abort(reason);
    await assert.rejects(within(stalled, 2000, "the rejection"), (e) => e === reason);
  } finally {
    release.resolve();
    client.close();
    await server.shutdown();
  }
});
