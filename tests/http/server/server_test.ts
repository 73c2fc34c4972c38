/**
 * The HTTP/1.1 server over real sockets: keep-alive and pipelining, chunked bodies cut into
 * small writes, 100-continue, refusals, event streams, and what the issue was about: a client
 * that leaves is noticed at once, whatever its body's size and whether its answer has started.
 */
import assert from "node:assert/strict";
import { type HttpServer, serveHttp } from "../../../src/http/server/server.ts";
import type { Handler } from "../../../src/http/server/connection.ts";
import { BytesResponse } from "../../../src/http/response.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function withServer(
  handler: Handler,
  fn: (port: number, server: HttpServer, errors: unknown[]) => Promise<void>,
  options: { idleTimeoutMs?: number; sendTimeoutMs?: number } = {},
): Promise<void> {
  const errors: unknown[] = [];
  const server = serveHttp(
    { hostname: "127.0.0.1", port: 0, onError: (e) => errors.push(e), ...options },
    handler,
  );
  try {
    await fn(server.addr.port, server, errors);
  } finally {
    await server.shutdown();
  }
}

/** A raw client connection. */
class Raw {
  #text = "";
  #closed = false;
  private constructor(readonly conn: Deno.TcpConn) {}
  static async open(port: number): Promise<Raw> {
    return new Raw(await Deno.connect({ hostname: "127.0.0.1", port }));
  }
  async send(text: string | Uint8Array): Promise<void> {
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }
  /** Reads until `done(text)` holds or the server closes; the text so far. */
  async until(done: (text: string) => boolean, ms = 5000): Promise<string> {
    const buf = new Uint8Array(65536);
    const deadline = Date.now() + ms;
    while (!done(this.#text) && !this.#closed) {
      if (Date.now() > deadline) throw new Error(`timed out; read so far: ${this.#text}`);
      const n = await this.conn.read(buf);
      if (n === null) this.#closed = true;
      else this.#text += decoder.decode(buf.subarray(0, n));
    }
    return this.#text;
  }
  get closed(): boolean {
    return this.#closed;
  }
  close(): void {
    try {
      this.conn.close();
    } catch {
      // Closed.
    }
  }
}

const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

Deno.test("one connection carries pipelined requests, answered in order, bodies read exactly", async () => {
  await withServer(async (request) => {
    const body = request.body ? await request.text() : "";
    return Response.json({ path: new URL(request.url).pathname, body });
  }, async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send(
        "POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nhost: x\r\n\r\n" +
          "\r\nPOST /c HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      );
      const text = await raw.until((t) => count(t, /HTTP\/1\.1 200/g) === 3 && t.endsWith("}"));
      const bodies = [...text.matchAll(/\{[^}]*\}/g)].map((m) => JSON.parse(m[0]));
      assert.deepEqual(bodies, [
        { path: "/a", body: "hello" },
        { path: "/b", body: "" },
        { path: "/c", body: "abc" },
      ]);
      assert.equal(count(text, /connection: close/g), 0);
      assert.equal(count(text, /content-length: /g), 3);
      assert.ok(!raw.closed);
    } finally {
      raw.close();
    }
  });
});

Deno.test("a chunked body written a few bytes at a time arrives whole", async () => {
  const payload = "The harbour master keeps a careful log. ".repeat(500);
  await withServer(async (request) => {
    return new Response(String((await request.text()) === payload));
  }, async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send("POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n");
      const wire = encoder.encode(
        `${payload.length.toString(16)};ext=1\r\n${payload}\r\n0\r\ntrailer: x\r\n\r\n`,
      );
      for (let at = 0; at < wire.length; at += 997) await raw.send(wire.subarray(at, at + 997));
      const text = await raw.until((t) => t.endsWith("true") || t.endsWith("false"));
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(text.endsWith("\r\n\r\ntrue"));
    } finally {
      raw.close();
    }
  });
});

Deno.test("Expect: 100-continue is answered when the handler reads the body, and not before", async () => {
  const read = Promise.withResolvers<void>();
  await withServer(async (request) => {
    await read.promise;
    return new Response(await request.text());
  }, async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send(
        "POST / HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n",
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      read.resolve();
      const head = await raw.until((t) => t.includes("100 Continue\r\n\r\n"));
      assert.equal(head, "HTTP/1.1 100 Continue\r\n\r\n");
      await raw.send("hi");
      assert.match(await raw.until((t) => t.endsWith("hi")), /HTTP\/1\.1 200 OK/);
    } finally {
      raw.close();
    }
  });
});

Deno.test("an answer given before the body was read says Connection: close once, and closes", async () => {
  await withServer(
    () => new Response("no", { status: 401, headers: { connection: "close" } }),
    async (port) => {
      const raw = await Raw.open(port);
      try {
        await raw.send("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n{");
        const text = await raw.until(() => false);
        assert.match(text, /^HTTP\/1\.1 401 Unauthorized\r\n/);
        assert.equal(count(text, /connection: close/gi), 1);
        assert.ok(raw.closed);
      } finally {
        raw.close();
      }
    },
  );
});

for (const size of [100, 10_000, 300_000]) {
  Deno.test(`a client that leaves after a ${size}-byte body aborts the request's signal at once`, async () => {
    const aborted = Promise.withResolvers<number>();
    let received = 0;
    await withServer(async (request) => {
      received = (await request.arrayBuffer()).byteLength;
      const started = performance.now();
      request.signal.addEventListener("abort", () => aborted.resolve(performance.now() - started));
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 5000);
        request.signal.addEventListener("abort", () => resolve(clearTimeout(timer)));
      });
      return new Response("late");
    }, async (port) => {
      const raw = await Raw.open(port);
      await raw.send(
        `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${size}\r\n\r\n${"x".repeat(size)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      raw.close();
      const timer = setTimeout(() => aborted.reject(new Error("not aborted within 2 s")), 2000);
      const after = await aborted.promise;
      clearTimeout(timer);
      assert.equal(received, size);
      assert.ok(after < 2000);
    });
  });
}

Deno.test("a client that leaves an event stream between events cancels the stream and aborts the signal", async () => {
  const cancelled = Promise.withResolvers<void>();
  const aborted = Promise.withResolvers<void>();
  await withServer((request) => {
    request.signal.addEventListener("abort", () => aborted.resolve());
    let sent = false;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (!sent) {
            sent = true;
            controller.enqueue(encoder.encode("data: 1\n\n"));
          }
          return new Promise(() => {}); // the next event never comes
        },
        cancel() {
          cancelled.resolve();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  }, async (port) => {
    const raw = await Raw.open(port);
    await raw.send("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}");
    const text = await raw.until((t) => t.includes("data: 1"));
    assert.match(text, /transfer-encoding: chunked/);
    raw.close();
    await Promise.all([cancelled.promise, aborted.promise]);
  });
});

Deno.test("event streams are chunked for HTTP/1.1 and close-delimited for HTTP/1.0", async () => {
  const stream = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("data: a\n\n"));
          setTimeout(() => {
            controller.enqueue(encoder.encode("data: b\n\n"));
            controller.close();
          }, 20);
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  await withServer(stream, async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
      const text = await raw.until((t) => t.endsWith("0\r\n\r\n"));
      assert.ok(text.endsWith("9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n"), text);
      const old = await Raw.open(port);
      await old.send("GET / HTTP/1.0\r\n\r\n");
      const oldText = await old.until(() => false);
      assert.ok(oldText.endsWith("\r\n\r\ndata: a\n\ndata: b\n\n"), oldText);
      assert.match(oldText, /connection: close/);
      old.close();
    } finally {
      raw.close();
    }
  });
});

Deno.test("HEAD, 204 and 304 carry no body; HEAD keeps the handler's length", async () => {
  await withServer((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/204") return new Response(null, { status: 204 });
    if (path === "/304") return new Response(null, { status: 304 });
    return new Response(request.method === "HEAD" ? null : "hello", {
      headers: { "content-length": "5" },
    });
  }, async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send("HEAD / HTTP/1.1\r\nhost: x\r\n\r\nGET /204 HTTP/1.1\r\nhost: x\r\n\r\n");
      await raw.send("GET /304 HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n");
      const text = await raw.until((t) => t.endsWith("hello"));
      const heads = text.split(/\r\n\r\n/);
      assert.match(heads[0]!, /^HTTP\/1\.1 200 OK\r\n.*content-length: 5/s);
      assert.match(heads[1]!, /^HTTP\/1\.1 204 No Content\r\n/);
      assert.doesNotMatch(heads[1]!, /content-length|transfer-encoding/);
      assert.match(heads[2]!, /^HTTP\/1\.1 304 Not Modified\r\n/);
      assert.doesNotMatch(heads[2]!, /content-length|transfer-encoding/);
      assert.match(heads[3]!, /content-length: 5/);
      assert.equal(heads[4], "hello");
    } finally {
      raw.close();
    }
  });
});

Deno.test("malformed heads get a JSON error and a closed connection; the handler never runs", async () => {
  let calls = 0;
  await withServer(async (request) => {
    calls++;
    try {
      return new Response(await request.text());
    } catch (e) {
      return new Response(String(e), { status: 400 });
    }
  }, async (port) => {
    const cases: [string, number][] = [
      ["GET / HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n", 400],
      ["GET / HTTP/1.1\nhost: x\n\n", 400],
      ["GET / HTTP/3.0\r\n\r\n", 505],
      ["POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n", 501],
      [`GET / HTTP/1.1\r\nx: ${"a".repeat(70_000)}\r\n\r\n`, 431],
      ["POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", 400],
    ];
    for (const [head, status] of cases) {
      const raw = await Raw.open(port);
      try {
        await raw.send(head).catch(() => {});
        const text = await raw.until(() => false);
        assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), head.slice(0, 40));
        if (head.includes("zz")) assert.match(text, /malformed chunk size/);
        else {
          const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
          assert.equal(typeof body.error.message, "string");
          assert.match(text, /connection: close/);
        }
        assert.ok(raw.closed);
      } finally {
        raw.close();
      }
    }
    assert.equal(calls, 1); // only the one whose head was sound (its chunked body was not)
  });
});

Deno.test("a handler that throws gets a JSON 500 and the error is reported", async () => {
  await withServer(() => {
    throw new Error("boom");
  }, async (port, _server, errors) => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 500);
    assert.equal((await response.json()).error.type, "server_error");
    assert.equal((errors[0] as Error).message, "boom");
  });
});

Deno.test("shutdown closes idle connections, lets a request in flight finish with Connection: close", async () => {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const errors: unknown[] = [];
  const server = serveHttp(
    { hostname: "127.0.0.1", port: 0, onError: (e) => errors.push(e) },
    async () => {
      started.resolve();
      await release.promise;
      return new Response("done");
    },
  );
  const port = server.addr.port;
  const idle = await Raw.open(port);
  const busy = await Raw.open(port);
  await busy.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
  await started.promise;
  const stopped = server.shutdown();
  assert.equal(await idle.until(() => false), "");
  assert.ok(idle.closed);
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
  release.resolve();
  const text = await busy.until(() => false);
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(text, /connection: close/);
  assert.ok(text.endsWith("done"));
  await stopped;
  await server.finished;
  idle.close();
  busy.close();
  assert.deepEqual(errors, []);
});

Deno.test("a connection idle past its limit is closed", async () => {
  await withServer(() => new Response("ok"), async (port) => {
    const raw = await Raw.open(port);
    try {
      const started = performance.now();
      assert.equal(await raw.until(() => false), "");
      assert.ok(performance.now() - started < 3000);
    } finally {
      raw.close();
    }
  }, { idleTimeoutMs: 300 });
});

Deno.test("Host decides the URL; one that is no host cannot move the path", async () => {
  await withServer((request) => new Response(request.url), async (port) => {
    const ask = async (head: string) => {
      const raw = await Raw.open(port);
      try {
        await raw.send(head);
        const text = await raw.until(() => false);
        return text.slice(text.indexOf("\r\n\r\n") + 4);
      } finally {
        raw.close();
      }
    };
    const close = "connection: close\r\n\r\n";
    assert.equal(
      await ask(`GET /p?q HTTP/1.1\r\nhost: a.example:81\r\n${close}`),
      "http://a.example:81/p?q",
    );
    assert.equal(
      await ask(`GET /p HTTP/1.1\r\nhost: x/admin?\r\n${close}`),
      "http://host.invalid/p",
    );
    assert.equal(await ask(`GET /p HTTP/1.1\r\nhost: a%20b\r\n${close}`), "http://host.invalid/p");
    assert.equal(await ask(`GET /p HTTP/1.0\r\n\r\n`), `http://127.0.0.1:${port}/p`);
    assert.equal(await ask(`GET http://b.example/p HTTP/1.1\r\n${close}`), "http://b.example/p");
  });
});

Deno.test("a client that stops reading a stream is cut after the send limit, and the stream cancelled", async () => {
  const cancelled = Promise.withResolvers<void>();
  const piece = encoder.encode(`data: ${"x".repeat(64 * 1024)}\n\n`);
  await withServer(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(piece);
        },
        cancel() {
          cancelled.resolve();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    ), async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
      const timer = setTimeout(() => cancelled.reject(new Error("not cut within 5 s")), 5000);
      await cancelled.promise; // the client never reads
      clearTimeout(timer);
    } finally {
      raw.close();
    }
  }, { sendTimeoutMs: 300 });
});

Deno.test("reusePort lets two servers listen on one port; without it the second is refused", async () => {
  const handler = () => new Response("ok");
  const first = serveHttp({ hostname: "127.0.0.1", port: 0, reusePort: true }, handler);
  const port = first.addr.port;
  const second = serveHttp({ hostname: "127.0.0.1", port, reusePort: true }, handler);
  try {
    assert.equal(second.addr.port, port);
    assert.throws(() => serveHttp({ hostname: "127.0.0.1", port }, handler), Deno.errors.AddrInUse);
    for (let i = 0; i < 4; i++) {
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok");
    }
  } finally {
    await Promise.all([first.shutdown(), second.shutdown()]);
  }
});

Deno.test("an empty piece of an event stream is not written (it would end the chunked body)", async () => {
  await withServer(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("data: a\n\n"));
          controller.enqueue(new Uint8Array(0));
          controller.enqueue(encoder.encode("data: b\n\n"));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    ), async (port) => {
    const raw = await Raw.open(port);
    try {
      await raw.send("GET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n");
      const text = await raw.until((t) => count(t, /0\r\n\r\n/g) === 2);
      const bodies = text.split(/HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\n/).filter((b) => b !== "");
      assert.deepEqual(bodies, [
        "9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n",
        "9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n",
      ]);
    } finally {
      raw.close();
    }
  });
});

Deno.test("a BytesResponse's lent parts are released once, after they are written, and when the client left first", async () => {
  const released: string[] = [];
  const big = "x".repeat(200_000);
  await withServer((request) => {
    const name = new URL(request.url).pathname.slice(1);
    const parts = [encoder.encode('{"a":"'), encoder.encode(big), encoder.encode('"}')];
    return new BytesResponse(parts, { headers: { "content-type": "application/json" } }, () => {
      released.push(name);
    });
  }, async (port) => {
    const answer = await fetch(`http://127.0.0.1:${port}/whole`);
    assert.equal((await answer.json()).a, big);
    assert.deepEqual(released, ["whole"]);
    // A client that sends the request and leaves: the write fails, the parts are released.
    const raw = await Raw.open(port);
    await raw.send("GET /left HTTP/1.1\r\nHost: x\r\n\r\n");
    raw.close();
    for (let i = 0; i < 100 && released.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(released, ["whole", "left"]);
  });
});
