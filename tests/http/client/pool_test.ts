import assert from "node:assert/strict";
import { ConnectionPool, type Connector, type Origin } from "../../../src/http/client/pool.ts";
import { eventually } from "../../support/eventually.ts";
import { answer, type Peer, RawServer, within } from "./raw_server.ts";

/** The origin of `server` (as the client would key it). */
function originOf(server: RawServer, key = `http://127.0.0.1:${server.port}`): Origin {
  return { key, hostname: "127.0.0.1", port: server.port, tls: false, host: "127.0.0.1" };
}

/** `Deno.connect` that counts its calls and keeps what it was given. */
function counting() {
  const calls: { origin: Origin; signal: AbortSignal }[] = [];
  const connect: Connector = (origin, signal) => {
    calls.push({ origin, signal });
    return Deno.connect({ hostname: origin.hostname, port: origin.port, signal });
  };
  return { calls, connect };
}

/** A pool over `server` through a counting connector, its origin and a signal never aborted. */
function pooled(server: RawServer, maxIdle = 4) {
  const { calls, connect } = counting();
  return {
    pool: new ConnectionPool(connect, maxIdle),
    calls,
    origin: originOf(server),
    signal: new AbortController().signal,
  };
}

/** Waits until `probe` holds (a connection the pool closes in the background). */
function until(probe: () => boolean, what: string): Promise<true> {
  return eventually(() => probe() || undefined, what, 2000);
}

/** A server that leaves its connections to the test: they stay open until it closes them. */
function idleServer(): { server: RawServer; peers: Promise<Peer>[] } {
  const resolvers: PromiseWithResolvers<Peer>[] = [];
  const peer = (i: number) => (resolvers[i] ??= Promise.withResolvers<Peer>());
  const server = new RawServer(async (p, i) => {
    peer(i).resolve(p);
    await p.clientClosed(10_000).catch(() => {});
  });
  return { server, peers: Array.from({ length: 4 }, (_, i) => peer(i).promise) };
}

Deno.test("ConnectionPool opens a connection through its connector, and hands a released one out again", async () => {
  await using server = new RawServer(async (peer) => {
    while (await peer.request()) await peer.send(answer("200 OK", ["Content-Length: 2"], "ok"));
  });
  const { pool, calls, origin, signal } = pooled(server);
  const first = await pool.acquire(origin, signal);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]?.origin, origin);
  assert.equal(calls[0]?.signal, signal);
  pool.release(origin, first);
  const again = await pool.acquire(origin, signal);
  assert.equal(again, first, "the idle connection");
  assert.equal(calls.length, 1, "no new socket");
  // The read the idle connection had pending is the request's: its answer arrives through it.
  await again.write(new TextEncoder().encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
  assert.equal((await within(again.readHead(), 2000, "the head"))?.status, 200);
  again.close();
  pool.close();
});

Deno.test("ConnectionPool hands out the most recently released connection first, per origin", async () => {
  const { server, peers } = idleServer();
  await using _server = server;
  const { calls, connect } = counting();
  const pool = new ConnectionPool(connect, 4);
  const origin = originOf(server);
  const other = originOf(server, "http://other.test:1");
  const signal = new AbortController().signal;
  const a = await pool.acquire(origin, signal);
  const b = await pool.acquire(origin, signal);
  pool.release(origin, a);
  pool.release(origin, b);
  assert.equal(await pool.acquire(origin, signal), b);
  assert.equal(await pool.acquire(origin, signal), a);
  pool.release(origin, a);
  const c = await pool.acquire(other, signal);
  assert.notEqual(c, a, "another origin's idle connection is not handed out");
  assert.equal(calls.length, 3);
  await within(Promise.all(peers.slice(0, 3)), 2000, "three connections");
  for (const connection of [a, b, c]) connection.close();
  pool.close();
});

Deno.test("ConnectionPool keeps at most maxIdlePerOrigin idle connections and closes the others", async () => {
  const { server, peers } = idleServer();
  await using _server = server;
  const { pool, origin, signal } = pooled(server, 1);
  const a = await pool.acquire(origin, signal);
  const b = await pool.acquire(origin, signal);
  pool.release(origin, a);
  pool.release(origin, b);
  assert.equal(b.closed, true, "over the limit: closed");
  assert.equal(a.closed, false);
  await (await peers[1]!).clientClosed();
  pool.close();
});

Deno.test("ConnectionPool drops an idle connection as soon as the server closes it", async () => {
  const { server, peers } = idleServer();
  await using _server = server;
  const { pool, calls, origin, signal } = pooled(server);
  const first = await pool.acquire(origin, signal);
  pool.release(origin, first);
  (await peers[0]!).close();
  await until(() => first.closed, "the pool to close the dropped connection");
  const next = await pool.acquire(origin, signal);
  assert.notEqual(next, first);
  assert.equal(calls.length, 2);
  next.close();
  pool.close();
});

Deno.test("ConnectionPool drops an idle connection the server sends bytes on unasked", async () => {
  const { server, peers } = idleServer();
  await using _server = server;
  const { pool, origin, signal } = pooled(server);
  const first = await pool.acquire(origin, signal);
  pool.release(origin, first);
  const peer = await peers[0]!;
  await peer.send(answer("408 Request Timeout", ["Connection: close"]));
  await until(() => first.closed, "the pool to close the connection");
  await peer.clientClosed();
  const next = await pool.acquire(origin, signal);
  assert.notEqual(next, first);
  next.close();
  pool.close();
});

Deno.test("ConnectionPool does not keep a closed connection", async () => {
  const { server } = idleServer();
  await using _server = server;
  const { pool, calls, origin, signal } = pooled(server);
  const first = await pool.acquire(origin, signal);
  first.close();
  pool.release(origin, first);
  const next = await pool.acquire(origin, signal);
  assert.notEqual(next, first);
  assert.equal(calls.length, 2);
  next.close();
  pool.close();
});

Deno.test("ConnectionPool.close closes the idle connections, and those released later", async () => {
  const { server, peers } = idleServer();
  await using _server = server;
  const { pool, origin, signal } = pooled(server);
  const idle = await pool.acquire(origin, signal);
  const busy = await pool.acquire(origin, signal);
  pool.release(origin, idle);
  pool.close();
  assert.equal(idle.closed, true);
  await (await peers[0]!).clientClosed();
  assert.equal(busy.closed, false, "a connection in use is its request's to close");
  pool.release(origin, busy);
  assert.equal(busy.closed, true);
  await (await peers[1]!).clientClosed();
});

Deno.test("ConnectionPool.acquire rejects as its connector does", async () => {
  const reason = new Error("no route");
  const pool = new ConnectionPool(() => Promise.reject(reason), 4);
  const origin = { key: "http://x.test", hostname: "x.test", port: 80, tls: false, host: "x.test" };
  await assert.rejects(pool.acquire(origin, new AbortController().signal), (e) => e === reason);
  pool.close();
});
