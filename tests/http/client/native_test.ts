import assert from "node:assert/strict";
import { BodyCut } from "../../../src/http/client/body.ts";
import { NativeHttpClient, writes } from "../../../src/http/client/native.ts";
import type { Origin } from "../../../src/http/client/pool.ts";
import { HttpProtocolError } from "../../../src/http/client/response_head.ts";
import type { ClientRequest, ClientResponse } from "../../../src/http/client/types.ts";
import { answer, header, type Peer, type RawRequest, RawServer, within } from "./raw_server.ts";
import { testCerts } from "./tls_certs.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A request with no headers and a signal nobody fires, `init` on top. */
function call(
  client: NativeHttpClient,
  url: string,
  init: Partial<ClientRequest> = {},
): Promise<ClientResponse> {
  return client.request({
    method: "GET",
    url,
    headers: {},
    signal: new AbortController().signal,
    ...init,
  });
}

/** Every piece of `response`'s body, joined. */
async function drain(response: ClientResponse): Promise<Uint8Array> {
  let all = new Uint8Array(0);
  for (let piece = await response.read(); piece !== null; piece = await response.read()) {
    const grown = new Uint8Array(all.length + piece.length);
    grown.set(all);
    grown.set(piece, all.length);
    all = grown;
  }
  return all;
}

/** A `Deno.serve` server on 127.0.0.1 (or `options.hostname`) that counts the connections
 * its requests came on. */
function serve(
  handler: (request: Request) => Response | Promise<Response>,
  options: { hostname?: string; cert?: string; key?: string } = {},
) {
  const ports = new Set<number>();
  const hostname = options.hostname ?? "127.0.0.1";
  const server = Deno.serve(
    { port: 0, onListen() {}, ...options, hostname },
    (request, info) => {
      ports.add(info.remoteAddr.port);
      return handler(request);
    },
  );
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  const scheme = options.cert === undefined ? "http" : "https";
  return {
    url: `${scheme}://${host}:${server.addr.port}`,
    port: server.addr.port,
    /** Connections requests came on so far. */
    connections: () => ports.size,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** A raw server answering every request with `reply(request, peer, index)` (a string sent as
 * is; `null` closes the connection unanswered), connection after connection. */
function rawServer(
  reply: (request: RawRequest, peer: Peer, index: number) => string | null,
): RawServer {
  return new RawServer(async (peer, index) => {
    for (let request = await peer.request(); request !== null; request = await peer.request()) {
      const text = reply(request, peer, index);
      if (text === null) return peer.close();
      await peer.send(text);
    }
  });
}

const ok = (body: string, ...fields: string[]) =>
  answer("200 OK", [`Content-Length: ${encoder.encode(body).length}`, ...fields], body);

Deno.test("NativeHttpClient GET: status, headers, length and body; the request has Host, the defaults and the caller's headers", async () => {
  const seen: { method: string; target: string; headers: Headers }[] = [];
  await using server = serve((request) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      target: url.pathname + url.search,
      headers: request.headers,
    });
    return new Response("héllo wörld ✓", { status: 201, headers: { "x-answer": "yes" } });
  });
  const client = new NativeHttpClient();
  const response = await call(client, `${server.url}/v1/models?x=1&y=%20`, {
    headers: { "Accept": "application/json", "X-Custom": "  spaced  " },
  });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get("x-answer"), "yes");
  assert.equal(response.length, encoder.encode("héllo wörld ✓").length);
  assert.deepEqual(await response.text(1000), { text: "héllo wörld ✓", complete: true });
  const request = seen[0]!;
  assert.equal(request.method, "GET");
  assert.equal(request.target, "/v1/models?x=1&y=%20");
  assert.equal(request.headers.get("host"), `127.0.0.1:${server.port}`);
  assert.equal(request.headers.get("accept"), "application/json", "the caller's, not the default");
  assert.equal(request.headers.get("accept-encoding"), "identity");
  assert.equal(request.headers.get("user-agent"), `Deno/${Deno.version.deno}`);
  assert.equal(request.headers.get("x-custom"), "spaced");
  assert.equal(request.headers.get("content-length"), null, "a GET without a body says nothing");
  client.close();
});

Deno.test("NativeHttpClient POST sends its body as UTF-8 with its byte length, and reads a multi-byte answer whole", async () => {
  const got: { length: string | null; text: string; type: string | null }[] = [];
  await using server = serve(async (request) => {
    const text = await request.text();
    got.push({
      length: request.headers.get("content-length"),
      text,
      type: request.headers.get("content-type"),
    });
    return new Response(`echo: ${text}`);
  });
  const client = new NativeHttpClient();
  const small = "héllo → 世界 🎉";
  const big = "ünïcødé 🎉 ".repeat(30_000);
  for (const body of [small, big, ""]) {
    const response = await call(client, `${server.url}/echo`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body,
    });
    assert.deepEqual(await response.text(10_000_000), { text: `echo: ${body}`, complete: true });
  }
  assert.deepEqual(got.map((g) => g.length), [
    String(encoder.encode(small).length),
    String(encoder.encode(big).length),
    "0",
  ]);
  assert.equal(got[0]?.text, small);
  assert.equal(got[1]?.text, big);
  assert.equal(got[0]?.type, "text/plain; charset=utf-8");
  assert.equal(server.connections(), 1, "one kept-alive connection for the three");
  client.close();
});

Deno.test("NativeHttpClient sends a body given in parts, small and large, byte for byte in order", async () => {
  const got: Uint8Array[] = [];
  await using server = serve(async (request) => {
    got.push(await request.bytes());
    return new Response("ok");
  });
  const client = new NativeHttpClient();
  const fill = (n: number, seed: number) =>
    Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) % 251);
  const parts = [fill(10, 1), fill(200_000, 2), fill(3, 3), fill(70_000, 4), fill(5, 5)];
  const response = await call(client, `${server.url}/parts`, { method: "POST", body: parts });
  assert.deepEqual(await response.text(1000), { text: "ok", complete: true });
  const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (whole.set(p, at), at + p.length), 0);
  assert.equal(got.length, 1);
  assert.deepEqual(got[0], whole);
  client.close();
});

Deno.test("writes: the head and small parts joined, each large part written as it is, uncopied", () => {
  const head = encoder.encode("POST / HTTP/1.1\r\n\r\n");
  const large = new Uint8Array(64 * 1024);
  const small = new Uint8Array([1, 2, 3]);
  const out = writes(head, [small, large, small, small]);
  assert.equal(out.length, 3);
  assert.deepEqual(out[0], new Uint8Array([...head, 1, 2, 3]));
  assert.equal(out[1], large, "the large part itself, not a copy");
  assert.deepEqual(out[2], new Uint8Array([1, 2, 3, 1, 2, 3]));
  assert.deepEqual(writes(head, [large]), [head, large]);
  assert.deepEqual(writes(head, null), [head]);
  assert.deepEqual(writes(head, [small]), [new Uint8Array([...head, 1, 2, 3])]);
});

Deno.test("NativeHttpClient reads a body of declared length into a lent buffer: released, it carries the next answer; kept, it is never reused", async () => {
  const bodies = ["a".repeat(40_000), "b".repeat(40_000), "c".repeat(40_000)];
  let next = 0;
  await using server = serve(() => new Response(bodies[next++]));
  const client = new NativeHttpClient();
  const first = await (await call(client, server.url)).bytes(1_000_000);
  assert.equal(decoder.decode(first.bytes), bodies[0]);
  assert.ok(first.release, "a body of declared length is lent");
  // Not released: the next answer has a buffer of its own.
  const second = await (await call(client, server.url)).bytes(1_000_000);
  assert.notEqual(second.bytes.buffer, first.bytes.buffer);
  assert.equal(decoder.decode(first.bytes), bodies[0], "an unreleased answer stays as it was");
  second.release!();
  const third = await (await call(client, server.url)).bytes(1_000_000);
  assert.equal(third.bytes.buffer, second.bytes.buffer, "the released buffer is lent again");
  assert.equal(decoder.decode(third.bytes), bodies[2]);
  client.close();
});

Deno.test("NativeHttpClient drops the caller's Host, Content-Length and Transfer-Encoding; a bodiless POST says Content-Length: 0", async () => {
  await using server = rawServer((request) => ok(JSON.stringify(request.fields)));
  const client = new NativeHttpClient();
  const fields = async (init: Partial<ClientRequest>) =>
    new Map(JSON.parse((await (await call(client, server.url(), init)).text(10_000)).text));
  const posted = await fields({
    method: "POST",
    headers: { host: "evil.test", "Content-Length": "999", "transfer-encoding": "chunked" },
    body: "four",
  });
  assert.equal(posted.get("host"), `127.0.0.1:${server.port}`);
  assert.equal(posted.get("content-length"), "4");
  assert.equal(posted.has("transfer-encoding"), false);
  const bodiless = await fields({ method: "POST" });
  assert.equal(bodiless.get("content-length"), "0");
  const deleted = await fields({ method: "DELETE" });
  assert.equal(deleted.get("content-length"), "0");
  client.close();
});

Deno.test("NativeHttpClient reads a chunked answer piece by piece, and keeps its connection", async () => {
  const pieces = ["data: one\n\n", "data: twö\n\n", "data: [DONE]\n\n"];
  await using server = serve(() =>
    new Response(
      new ReadableStream({
        async start(controller) {
          for (const piece of pieces) {
            controller.enqueue(encoder.encode(piece));
            await new Promise((r) => setTimeout(r, 5));
          }
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const client = new NativeHttpClient();
  for (let i = 0; i < 2; i++) {
    const response = await call(client, server.url);
    assert.equal(response.length, null);
    assert.equal(response.headers.get("transfer-encoding"), "chunked");
    assert.equal(decoder.decode(await drain(response)), pieces.join(""));
    assert.equal(await response.read(), null, "still at its end");
  }
  assert.equal(server.connections(), 1);
  client.close();
});

Deno.test("NativeHttpClient gives the chunks of one network read as one piece", async () => {
  const events = ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"];
  await using server = rawServer(() =>
    answer(
      "200 OK",
      ["Transfer-Encoding: chunked"],
      events.map((e) => `${e.length.toString(16)}\r\n${e}\r\n`).join("") + "0\r\n\r\n",
    )
  );
  const client = new NativeHttpClient();
  const response = await call(client, server.url());
  assert.equal(decoder.decode((await response.read())!), events.join(""), "one piece");
  assert.equal(await response.read(), null);
  client.close();
});

Deno.test("NativeHttpClient: sequential requests share one connection; concurrent ones open their own, then are reused", async () => {
  let arrived = 0;
  const all = Promise.withResolvers<void>();
  await using server = serve(async (request) => {
    if (new URL(request.url).pathname === "/together") {
      if (++arrived === 3) all.resolve();
      await within(all.promise, 2000, "three concurrent requests");
    }
    return new Response("ok");
  });
  const client = new NativeHttpClient();
  for (let i = 0; i < 5; i++) {
    assert.equal((await (await call(client, server.url)).text(10)).text, "ok");
  }
  assert.equal(server.connections(), 1);
  const together = await Promise.all(
    [0, 1, 2].map(async () => (await call(client, `${server.url}/together`)).text(10)),
  );
  assert.deepEqual(together.map((t) => t.text), ["ok", "ok", "ok"]);
  assert.equal(server.connections(), 3, "two more for the concurrent requests");
  await Promise.all([0, 1, 2].map(async () => (await call(client, server.url)).text(10)));
  assert.equal(server.connections(), 3, "the three idle ones carried the next three");
  client.close();
});

Deno.test("NativeHttpClient: an answer not read to its end closes its connection", async () => {
  await using server = new RawServer(async (peer) => {
    while (await peer.request()) await peer.send(ok("x".repeat(100)));
  });
  const client = new NativeHttpClient();
  const response = await call(client, server.url());
  assert.equal((await response.read())?.length, 100);
  assert.equal(await response.read(), null);
  const cancelled = await call(client, server.url());
  cancelled.cancel();
  assert.equal(await cancelled.read(), null, "nothing after cancel");
  await call(client, server.url()).then((r) => r.text(1000));
  assert.equal(server.accepted, 2, "the cancelled answer's connection was not reused");
  await server.peers[0]!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: the pool drops an idle connection the server closes, and the next request opens a new one", async () => {
  const firstAnswered = Promise.withResolvers<Peer>();
  await using server = new RawServer(async (peer, index) => {
    const request = await peer.request();
    if (request === null) return;
    await peer.send(ok(`from ${index}`));
    if (index === 0) {
      // Closes its side once idle (as a server's keep-alive timeout does), reading on.
      await peer.closeWrite();
      firstAnswered.resolve(peer);
      await peer.clientClosed(5000).catch(() => {});
    }
  });
  const client = new NativeHttpClient();
  assert.equal((await (await call(client, server.url())).text(100)).text, "from 0");
  const first = await within(firstAnswered.promise, 2000, "the first answer");
  // The idle connection's pending read sees the FIN: the client closes it with no request.
  await first.clientClosed(2000);
  assert.equal((await (await call(client, server.url())).text(100)).text, "from 1");
  assert.equal(server.accepted, 2);
  client.close();
});

Deno.test("NativeHttpClient: a server that closes each connection right after its answer never fails the next request", async () => {
  // The close races the next request: the pool has dropped the connection already, or the
  // request takes it and is sent again on a new one.
  await using server = new RawServer(async (peer) => {
    if (!(await peer.request())) return;
    await peer.send(ok("once"));
    peer.close();
  });
  const client = new NativeHttpClient();
  for (let i = 0; i < 20; i++) {
    assert.equal((await (await call(client, server.url())).text(100)).text, "once");
  }
  assert.equal(server.accepted, 20);
  client.close();
});

Deno.test("NativeHttpClient retries once, on a new connection, when a reused one is closed after the request was sent", async () => {
  const bodies: string[] = [];
  await using server = rawServer((request, _peer, index) => {
    bodies.push(`${index}:${decoder.decode(request.body)}`);
    // The first connection answers once, then closes on reading the next request.
    if (index === 0 && bodies.length > 1) return null;
    return ok(`answer ${bodies.length}`);
  });
  const client = new NativeHttpClient();
  assert.equal((await (await call(client, server.url())).text(100)).text, "answer 1");
  const retried = await call(client, server.url(), { method: "POST", body: "twice" });
  assert.equal((await retried.text(100)).text, "answer 3");
  assert.deepEqual(bodies, ["0:", "0:twice", "1:twice"]);
  assert.equal(server.accepted, 2);
  client.close();
});

Deno.test("NativeHttpClient retries on a new connection, not on another idle one", async () => {
  // Two idle connections that a server closes together (its idle timeout): taking the second
  // after the first failed would fail too.
  const arrivals: number[] = [];
  const both = Promise.withResolvers<void>();
  await using server = new RawServer(async (peer, index) => {
    for (let request = await peer.request(); request !== null; request = await peer.request()) {
      arrivals.push(index);
      if (index >= 2) {
        await peer.send(ok("fresh"));
        continue;
      }
      if (arrivals.length > 2) return peer.close();
      if (arrivals.length === 2) both.resolve();
      await within(both.promise, 2000, "two concurrent requests");
      await peer.send(ok("first"));
    }
  });
  const client = new NativeHttpClient();
  await Promise.all([0, 1].map(async () => (await call(client, server.url())).text(100)));
  assert.equal(server.accepted, 2);
  const response = await call(client, server.url(), { method: "POST", body: "x" });
  assert.equal((await response.text(100)).text, "fresh");
  assert.equal(server.accepted, 3);
  assert.equal(arrivals.length, 4, "the request was sent twice: once reused, once new");
  client.close();
});

Deno.test("NativeHttpClient does not retry a new connection that fails, nor a second time", async () => {
  // A new connection closed after the request: no answer, no retry.
  await using fresh = rawServer(() => null);
  const client = new NativeHttpClient();
  await assert.rejects(call(client, fresh.url(), { method: "POST", body: "once" }), BodyCut);
  assert.equal(fresh.accepted, 1);

  // A reused connection closed after the request, and its retry's new one too: one retry only.
  let requests = 0;
  await using twice = rawServer(() => ++requests === 1 ? ok("first") : null);
  await (await call(client, twice.url())).text(100);
  await assert.rejects(call(client, twice.url()), BodyCut);
  assert.equal(twice.accepted, 2);
  assert.equal(requests, 3);

  // Nobody listening: the connection error as it is.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  await assert.rejects(call(client, `http://127.0.0.1:${port}/`), Deno.errors.ConnectionRefused);
  client.close();
});

Deno.test("NativeHttpClient does not retry a reused connection once a byte of the answer came", async () => {
  let requests = 0;
  await using server = new RawServer(async (peer) => {
    while (await peer.request()) {
      if (++requests === 1) {
        await peer.send(ok("first"));
        continue;
      }
      await peer.send("HTTP/1.1 200");
      return peer.close();
    }
  });
  const client = new NativeHttpClient();
  await (await call(client, server.url())).text(100);
  await assert.rejects(call(client, server.url()), HttpProtocolError);
  assert.equal(server.accepted, 1);
  assert.equal(requests, 2);
  client.close();
});

Deno.test("NativeHttpClient: a signal aborted before the request rejects with its reason, and connects nowhere", async () => {
  await using server = rawServer(() => ok("never"));
  const client = new NativeHttpClient();
  const reason = new Error("stop");
  await assert.rejects(call(client, server.url(), { signal: AbortSignal.abort(reason) }), (e) => {
    assert.equal(e, reason);
    return true;
  });
  assert.equal(server.accepted, 0);
  client.close();
});

Deno.test("NativeHttpClient: an abort while connecting rejects with its reason, and a socket that opens anyway is closed", async () => {
  const served: number[] = [];
  await using server = rawServer((_request, _peer, index) => {
    served.push(index);
    return ok("served");
  });
  const client = new NativeHttpClient();
  for (let i = 0; i < 5; i++) {
    const controller = new AbortController();
    const reason = new Error(`abort ${i}`);
    const request = call(client, server.url(), { signal: controller.signal });
    // The request is in Deno.connect now (nothing else runs before the abort).
    controller.abort(reason);
    await assert.rejects(request, (e) => e === reason);
  }
  // The client still works, and every connection the aborts left is closed.
  assert.equal((await (await call(client, server.url())).text(100)).text, "served");
  for (const [index, peer] of server.peers.entries()) {
    if (!served.includes(index)) await peer.clientClosed();
  }
  client.close();
});

Deno.test("NativeHttpClient: an abort that lands as the connection opens is not missed", async () => {
  await using server = new RawServer(async (peer) => {
    await peer.clientClosed(5000).catch(() => {});
  });
  const controller = new AbortController();
  const reason = new Error("aborted as it connected");
  const client = new NativeHttpClient({
    // Opens the socket, and the abort comes before the request can listen for it.
    connect: async (origin, signal) => {
      const conn = await Deno.connect({ hostname: origin.hostname, port: origin.port, signal });
      controller.abort(reason);
      return conn;
    },
  });
  const request = call(client, server.url(), { signal: controller.signal });
  await assert.rejects(within(request, 2000, "the rejection"), (e) => e === reason);
  await server.peers[0]!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: an abort while waiting for the head rejects with its reason and closes the socket", async () => {
  const asked = Promise.withResolvers<Peer>();
  await using server = new RawServer(async (peer) => {
    if (await peer.request()) asked.resolve(peer);
  });
  const client = new NativeHttpClient();
  const controller = new AbortController();
  const reason = new DOMException("gave up", "TimeoutError");
  const request = call(client, server.url(), { signal: controller.signal });
  const peer = await within(asked.promise, 2000, "the request");
  controller.abort(reason);
  await assert.rejects(within(request, 2000, "the rejection"), (e) => e === reason);
  await peer.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: an abort while reading the body rejects the read with its reason and closes the socket", async () => {
  const peers: Peer[] = [];
  await using server = new RawServer(async (peer) => {
    const request = await peer.request();
    if (request === null) return;
    peers.push(peer);
    if (request.target === "/chunked") {
      await peer.send(answer("200 OK", ["Transfer-Encoding: chunked"], "5\r\nfirst\r\n"));
    } else await peer.send(answer("200 OK", ["Content-Length: 1000"], "first"));
    await peer.clientClosed(5000).catch(() => {});
  });
  const client = new NativeHttpClient();
  for (const path of ["/length", "/chunked"]) {
    // A read waiting for bytes when the abort comes.
    const controller = new AbortController();
    const reason = new Error(`stop ${path}`);
    const response = await call(client, server.url(path), { signal: controller.signal });
    assert.equal(decoder.decode((await response.read())!), "first");
    const reading = response.read();
    controller.abort(reason);
    await assert.rejects(within(reading, 2000, "the rejection"), (e) => e === reason);
    assert.equal(await response.read(), null, "nothing after the abort");
    await peers.at(-1)!.clientClosed();

    // text() waiting for the rest of the body.
    const textController = new AbortController();
    const textReason = new Error(`stop text ${path}`);
    const texting = await call(client, server.url(path), { signal: textController.signal });
    const text = texting.text(10_000);
    await new Promise((r) => setTimeout(r, 10));
    textController.abort(textReason);
    await assert.rejects(within(text, 2000, "the rejection"), (e) => e === textReason);
    await peers.at(-1)!.clientClosed();
  }
  client.close();
});

Deno.test("NativeHttpClient: an abort after the answer was read changes nothing", async () => {
  await using server = rawServer(() => ok("done"));
  const client = new NativeHttpClient();
  const controller = new AbortController();
  const response = await call(client, server.url(), { signal: controller.signal });
  assert.equal((await response.text(100)).text, "done");
  controller.abort(new Error("late"));
  assert.equal((await (await call(client, server.url())).text(100)).text, "done");
  assert.equal(server.accepted, 1, "the connection went back to the pool, unharmed");
  client.close();
});

Deno.test("NativeHttpClient text(maxBytes) cuts a long body there, and closes its connection", async () => {
  const long = "0123456789".repeat(1000);
  await using server = new RawServer(async (peer) => {
    for (let request = await peer.request(); request !== null; request = await peer.request()) {
      if (request.target === "/chunked") {
        await peer.send(answer("200 OK", ["Transfer-Encoding: chunked"]));
        for (let i = 0; i < long.length; i += 1000) {
          await peer.send(`3e8\r\n${long.slice(i, i + 1000)}\r\n`);
        }
        await peer.send("0\r\n\r\n");
      } else await peer.send(ok(long));
    }
  });
  for (const path of ["/length", "/chunked"]) {
    const client = new NativeHttpClient();
    const before = server.accepted;
    const cut = await call(client, server.url(path));
    assert.deepEqual(await cut.text(100), { text: long.slice(0, 100), complete: false }, path);
    await server.peers[before]!.clientClosed();
    const whole = await call(client, server.url(path));
    assert.deepEqual(await whole.text(long.length), { text: long, complete: true }, path);
    assert.equal(server.accepted, before + 2, "a new connection after the cut one");
    client.close();
  }
});

Deno.test("NativeHttpClient text() decodes a character split across chunks and reads", async () => {
  const e = encoder.encode("é");
  await using server = new RawServer(async (peer) => {
    if (!(await peer.request())) return;
    await peer.send(answer("200 OK", ["Transfer-Encoding: chunked"]));
    await peer.send(new Uint8Array([0x31, 0x0d, 0x0a, e[0]!, 0x0d, 0x0a]));
    await new Promise((r) => setTimeout(r, 10));
    await peer.send(new Uint8Array([0x31, 0x0d, 0x0a, e[1]!, 0x0d, 0x0a]));
    await peer.send("0\r\n\r\n");
  });
  const client = new NativeHttpClient();
  assert.deepEqual(await (await call(client, server.url())).text(100), {
    text: "é",
    complete: true,
  });
  client.close();
});

Deno.test("NativeHttpClient refuses header names and values that would inject fields, before connecting", async () => {
  await using server = rawServer(() => ok("ok"));
  const client = new NativeHttpClient();
  for (
    const headers of [
      { "x-evil": "a\r\nInjected: yes" },
      { "x-evil": "a\nInjected: yes" },
      { "x-evil": "a\rb" },
      { "x-evil": "a\0b" },
      { "bad name": "v" },
      { "bad:name": "v" },
      { "": "v" },
      { "x-evil\r\nInjected": "v" },
    ]
  ) {
    await assert.rejects(
      call(client, server.url(), { headers }),
      TypeError,
      JSON.stringify(headers),
    );
  }
  assert.equal(server.accepted, 0);
  const fine = await call(client, server.url(), { headers: { "x-fine": "tab\tand ünïcode" } });
  assert.equal((await fine.text(10)).text, "ok");
  client.close();
});

Deno.test("NativeHttpClient refuses URLs other than http: and https:", async () => {
  const client = new NativeHttpClient();
  for (const url of ["ftp://127.0.0.1/", "file:///etc/passwd", "ws://127.0.0.1/"]) {
    await assert.rejects(call(client, url), TypeError, url);
  }
  await assert.rejects(call(client, "not a url"), TypeError);
  client.close();
});

Deno.test("NativeHttpClient: the Host header and the socket's address for default ports and IPv6 literals", async () => {
  const hosts: string[] = [];
  await using server = rawServer((request) => {
    hosts.push(`${header(request, "host")} ${request.target}`);
    return ok("ok");
  });
  const origins: Origin[] = [];
  const client = new NativeHttpClient({
    // Every origin reaches the test server (whatever its name and port say).
    connect: (origin, signal) => {
      origins.push(origin);
      return Deno.connect({ hostname: "127.0.0.1", port: server.port, signal });
    },
  });
  for (
    const url of [
      "http://upstream.test/v1/chat?q=1",
      "http://upstream.test:80/",
      "http://upstream.test:8080/a",
      "http://[::1]/",
      "http://[::1]:8443/",
      "https://secure.test/",
    ]
  ) {
    // The https one gets a plain answer on its plain socket: only the head sent is checked.
    await (await call(client, url)).text(10);
  }
  assert.deepEqual(hosts, [
    "upstream.test /v1/chat?q=1",
    "upstream.test /",
    "upstream.test:8080 /a",
    "[::1] /",
    "[::1]:8443 /",
    "secure.test /",
  ]);
  assert.deepEqual(
    origins.map(({ hostname, port, tls, key }) => ({ hostname, port, tls, key })),
    [
      { hostname: "upstream.test", port: 80, tls: false, key: "http://upstream.test" },
      { hostname: "upstream.test", port: 8080, tls: false, key: "http://upstream.test:8080" },
      { hostname: "::1", port: 80, tls: false, key: "http://[::1]" },
      { hostname: "::1", port: 8443, tls: false, key: "http://[::1]:8443" },
      { hostname: "secure.test", port: 443, tls: true, key: "https://secure.test" },
    ],
    "one connection per origin (port 80 said or not is the same origin)",
  );
  client.close();
});

/** Whether this machine has an IPv6 loopback to listen on. */
const ipv6 = (() => {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "NativeHttpClient reaches a server on [::1]",
  ignore: !ipv6,
}, async () => {
  const hosts: (string | null)[] = [];
  await using server = serve((request) => {
    hosts.push(request.headers.get("host"));
    return new Response("over IPv6");
  }, { hostname: "::1" });
  assert.ok(server.url.startsWith("http://[::1]:"));
  const client = new NativeHttpClient();
  assert.equal((await (await call(client, `${server.url}/`)).text(100)).text, "over IPv6");
  assert.deepEqual(hosts, [`[::1]:${server.port}`]);
  client.close();
});

Deno.test("NativeHttpClient reads a body delimited by the close, and does not reuse its connection", async () => {
  await using server = new RawServer(async (peer) => {
    const request = await peer.request();
    if (request === null) return;
    const fields = request.target === "/1.0"
      ? "HTTP/1.0 200 OK\r\n\r\n"
      : "HTTP/1.1 200 OK\r\n\r\n";
    await peer.send(fields + "until ");
    await new Promise((r) => setTimeout(r, 5));
    await peer.send("the close");
    peer.close();
  });
  const client = new NativeHttpClient();
  for (const path of ["/1.1", "/1.0", "/1.1"]) {
    const response = await call(client, server.url(path));
    assert.equal(response.length, null);
    assert.deepEqual(await response.text(1000), { text: "until the close", complete: true });
  }
  assert.equal(server.accepted, 3);
  client.close();
});

Deno.test("NativeHttpClient: HTTP/1.0 keeps a connection only when the answer says keep-alive", async () => {
  await using server = rawServer((request) =>
    request.target === "/keep"
      ? "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"
      : "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"
  );
  const client = new NativeHttpClient();
  for (const path of ["/keep", "/keep", "/keep"]) {
    await (await call(client, server.url(path))).text(10);
  }
  assert.equal(server.accepted, 1);
  // The kept connection carries the first, then each is closed after its answer.
  for (const path of ["/close", "/close"]) await (await call(client, server.url(path))).text(10);
  assert.equal(server.accepted, 2);
  await server.peers[0]!.clientClosed();
  await server.peers[1]!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: HEAD, 204 and 304 have no body, whatever their length says, and keep the connection", async () => {
  await using server = rawServer((request) => {
    if (request.method === "HEAD") return answer("200 OK", ["Content-Length: 1234"]);
    if (request.target === "/204") return answer("204 No Content", []);
    if (request.target === "/304") return answer("304 Not Modified", ["Content-Length: 50"]);
    return ok("after");
  });
  const client = new NativeHttpClient();
  const head = await call(client, server.url(), { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), "1234");
  assert.equal(await head.read(), null);
  for (const path of ["/204", "/304"]) {
    const response = await call(client, server.url(path));
    assert.equal(response.status, Number(path.slice(1)));
    assert.deepEqual(await response.text(100), { text: "", complete: true });
  }
  assert.equal((await (await call(client, server.url())).text(100)).text, "after");
  assert.equal(server.accepted, 1);
  client.close();
});

Deno.test("NativeHttpClient skips 100 Continue and 103 Early Hints, and refuses 101", async () => {
  await using server = rawServer((request) =>
    request.target === "/101"
      ? answer("101 Switching Protocols", ["Upgrade: h2c", "Connection: upgrade"])
      : answer("100 Continue", []) + answer("103 Early Hints", ["Link: </a>; rel=preload"]) +
        ok("final", "X-Final: 1")
  );
  const client = new NativeHttpClient();
  const response = await call(client, server.url());
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-final"), "1");
  assert.equal(response.headers.get("link"), null);
  assert.equal((await response.text(100)).text, "final");
  await assert.rejects(call(client, server.url("/101")), HttpProtocolError);
  await server.peers[0]!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient refuses conflicting Content-Lengths and closes the connection", async () => {
  await using server = rawServer((request) =>
    answer("200 OK", [
      "Content-Length: 5",
      `Content-Length: ${request.target === "/same" ? 5 : request.target === "/nan" ? "five" : 6}`,
    ], "hello")
  );
  const client = new NativeHttpClient();
  for (const path of ["/different", "/nan"]) {
    await assert.rejects(call(client, server.url(path)), HttpProtocolError, path);
    await server.peers.at(-1)!.clientClosed();
  }
  assert.equal((await (await call(client, server.url("/same"))).text(100)).text, "hello");
  client.close();
});

Deno.test("NativeHttpClient refuses an answer with a CR or NUL inside a field value", async () => {
  await using server = rawServer(() =>
    "HTTP/1.1 200 OK\r\nX-Bad: a\0b\r\nContent-Length: 0\r\n\r\n"
  );
  const client = new NativeHttpClient();
  await assert.rejects(call(client, server.url()), HttpProtocolError);
  await server.peers[0]!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: an answer framed both by Transfer-Encoding and Content-Length is read chunked, its connection closed", async () => {
  await using server = rawServer(() =>
    answer(
      "200 OK",
      ["Content-Length: 3", "Transfer-Encoding: chunked"],
      "6\r\nchunks\r\n0\r\n\r\n",
    )
  );
  const client = new NativeHttpClient();
  const response = await call(client, server.url());
  assert.equal(response.length, null);
  assert.equal((await response.text(100)).text, "chunks");
  await server.peers[0]!.clientClosed();
  await (await call(client, server.url())).text(100);
  assert.equal(server.accepted, 2);
  client.close();
});

Deno.test("NativeHttpClient does not reuse a connection with bytes beyond the answer", async () => {
  await using server = rawServer(() => ok("ok") + "HTTP/1.1 200 OK\r\n");
  const client = new NativeHttpClient();
  assert.equal((await (await call(client, server.url())).text(100)).text, "ok");
  await server.peers[0]!.clientClosed();
  assert.equal((await (await call(client, server.url())).text(100)).text, "ok");
  assert.equal(server.accepted, 2);
  client.close();
});

Deno.test("NativeHttpClient: the last piece of a body stays intact while its connection carries the next request", async () => {
  await using server = rawServer((request) => ok(request.target === "/a" ? "AAAA" : "BBBBBBBB"));
  const client = new NativeHttpClient();
  const first = await call(client, server.url("/a"));
  const piece = (await first.read())!;
  assert.equal(decoder.decode(piece), "AAAA");
  // The caller still holds the piece (it has not read again) when another request goes out.
  const second = await call(client, server.url("/b"));
  assert.equal(decoder.decode(await drain(second)), "BBBBBBBB");
  assert.equal(server.accepted, 1, "the same connection");
  assert.equal(decoder.decode(piece), "AAAA");
  assert.equal(await first.read(), null);
  client.close();
});

Deno.test("NativeHttpClient.close closes the idle connections; a request after it still works, on a connection not kept", async () => {
  await using server = rawServer(() => ok("ok"));
  const client = new NativeHttpClient();
  await Promise.all([0, 1].map(async () => (await call(client, server.url())).text(10)));
  client.close();
  for (const peer of server.peers) await peer.clientClosed();
  assert.equal((await (await call(client, server.url())).text(10)).text, "ok");
  await server.peers.at(-1)!.clientClosed();
  client.close();
});

Deno.test("NativeHttpClient: an idle connection does not keep the process alive", async () => {
  await using server = rawServer(() => ok("ok"));
  const module = new URL("../../../src/http/client/native.ts", import.meta.url).href;
  const script = `
    const { NativeHttpClient } = await import(${JSON.stringify(module)});
    const client = new NativeHttpClient();
    const response = await client.request({
      method: "GET", url: ${JSON.stringify(server.url())}, headers: {},
      signal: new AbortController().signal,
    });
    console.log((await response.text(100)).text);
    // No client.close(): the idle connection must not hold the process.
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-lock", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = await within(child.output(), 10_000, "the child process to exit").catch((e) => {
    child.kill();
    throw e;
  });
  assert.equal(decoder.decode(output.stdout).trim(), "ok", decoder.decode(output.stderr));
  assert.equal(output.success, true);
});

Deno.test("NativeHttpClient over TLS: a server whose CA it was given, kept alive", async () => {
  const { ca, cert, key } = await testCerts();
  await using server = serve(() => new Response("secure ✓"), { cert, key });
  const client = new NativeHttpClient({ caCerts: [ca] });
  for (let i = 0; i < 3; i++) {
    const response = await call(client, `${server.url}/tls`, { method: "POST", body: "ping" });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.text(100), { text: "secure ✓", complete: true });
  }
  assert.equal(server.connections(), 1);
  client.close();
});

Deno.test("NativeHttpClient over TLS refuses a certificate it does not trust", async () => {
  const { cert, key } = await testCerts();
  await using server = serve(() => new Response("should not be read"), { cert, key });
  const client = new NativeHttpClient();
  await assert.rejects(call(client, `${server.url}/`), (e: unknown) => {
    assert.match(String(e), /certificate|UnknownIssuer/i);
    return true;
  });
  assert.equal(server.connections(), 0, "no request got through");
  client.close();
});

Deno.test("NativeHttpClient over TLS: an abort while connecting or in the handshake rejects with its reason", async () => {
  const { ca } = await testCerts();
  // A TCP server that never answers the handshake.
  await using server = new RawServer(async (peer) => {
    await peer.clientClosed(5000).catch(() => {});
  });
  const client = new NativeHttpClient({ caCerts: [ca] });
  const url = `https://127.0.0.1:${server.port}/`;
  const connecting = new AbortController();
  const request = call(client, url, { signal: connecting.signal });
  connecting.abort(new Error("while connecting"));
  await assert.rejects(request, /while connecting/);

  const handshaking = new AbortController();
  const stalled = call(client, url, { signal: handshaking.signal });
  const before = server.accepted;
  await within(
    (async () => {
      while (server.accepted === before) await new Promise((r) => setTimeout(r, 2));
    })(),
    2000,
    "the connection",
  );
  await new Promise((r) => setTimeout(r, 10));
  handshaking.abort(new Error("in the handshake"));
  await assert.rejects(within(stalled, 2000, "the rejection"), /in the handshake/);
  // The client's socket is closed (the sanitizers see no resource left), but the server does
  // not see it close: Deno finishes a TLS handshake before closing a socket (denoland/deno
  // #14547), and this server never answers the handshake. So no clientClosed() here.
  client.close();
});
