/**
 * One connection's writes, counted on a connection that records them: an event stream's head
 * goes with its first bytes, at once; what the body has ready after them goes out in one write
 * (the last batch with the chunked end); nothing waits for bytes that are not ready.
 */
import assert from "node:assert/strict";
import { type ConnectionContext, HttpConnection } from "../../../src/http/server/connection.ts";
import { DateField } from "../../../src/http/server/response_head.ts";
import { Expiries } from "../../../src/http/expiries.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A client connection that sends `request`, then waits; it records what the server writes. */
class RecordingConn {
  readonly writes: string[] = [];
  readonly remoteAddr: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 4000 };
  #unread: Uint8Array;
  readonly #closed = Promise.withResolvers<null>();
  #wrote = Promise.withResolvers<void>();

  constructor(request: string) {
    this.#unread = encoder.encode(request);
  }

  read(buf: Uint8Array): Promise<number | null> {
    if (this.#unread.length === 0) return this.#closed.promise;
    const n = Math.min(buf.length, this.#unread.length);
    buf.set(this.#unread.subarray(0, n));
    this.#unread = this.#unread.subarray(n);
    return Promise.resolve(n);
  }

  write(bytes: Uint8Array): Promise<number> {
    this.writes.push(decoder.decode(bytes));
    this.#wrote.resolve();
    this.#wrote = Promise.withResolvers();
    return Promise.resolve(bytes.length);
  }

  /** Resolves at the next write. */
  nextWrite(): Promise<void> {
    return this.#wrote.promise;
  }

  close(): void {
    this.#closed.resolve(null);
  }
}

/** Serves one request on a recording connection with `handler`. */
async function serveOne(
  conn: RecordingConn,
  handler: () => Response,
  during: () => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const timers = new Expiries(250);
  const ctx: ConnectionContext = {
    handler,
    origin: "http://127.0.0.1:8080",
    timers,
    date: new DateField(),
    headTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    sendTimeoutMs: 5000,
    onError: (e) => {
      throw e;
    },
    draining: () => false,
  };
  const connection = new HttpConnection(conn as unknown as Deno.Conn, ctx);
  await Promise.all([connection.serve(), during()]);
}

const REQUEST = "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";

function eventStream(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

Deno.test("an event stream's first bytes go with the head at once, the rest that is ready in one write", async () => {
  const conn = new RecordingConn(REQUEST);
  await serveOne(conn, () =>
    eventStream(
      new ReadableStream({
        start(controller) {
          for (const data of ["a", "b", "[DONE]"]) {
            controller.enqueue(encoder.encode(`data: ${data}\n\n`));
          }
          controller.close();
        },
      }),
    ));
  assert.equal(conn.writes.length, 2, JSON.stringify(conn.writes));
  const [first, rest] = conn.writes;
  assert.match(first!, /^HTTP\/1\.1 200 OK\r\n/);
  assert.ok(first!.endsWith("\r\n\r\n9\r\ndata: a\n\n\r\n"), first!);
  assert.equal(rest, "9\r\ndata: b\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
});

Deno.test("the first bytes are written before the next are made", async () => {
  const conn = new RecordingConn(REQUEST);
  const writesWhenPulled: number[] = [];
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      writesWhenPulled.push(conn.writes.length);
      if (sent++ < 2) controller.enqueue(encoder.encode("data: x\n\n"));
      else controller.close();
    },
  }, { highWaterMark: 0 });
  await serveOne(conn, () => eventStream(body));
  // The second event is asked for only once the head and the first are out.
  assert.deepEqual(writesWhenPulled, [0, 1, 1]);
  assert.equal(conn.writes.length, 2, JSON.stringify(conn.writes));
});

/**
 * Serves a stream that starts with the events `ready`, then, once the server's first write is
 * seen, gets `later` and ends; the first write and the ones after it.
 */
async function writesOf(ready: string[], later: string[]): Promise<[string, string[]]> {
  const conn = new RecordingConn(REQUEST);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      for (const data of ready) c.enqueue(encoder.encode(`data: ${data}\n\n`));
    },
  });
  let first = "";
  await serveOne(conn, () => eventStream(body), async () => {
    await conn.nextWrite();
    assert.equal(conn.writes.length, 1);
    first = conn.writes[0]!;
    for (const data of later) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
    controller.close();
  });
  return [first, conn.writes.slice(1)];
}

Deno.test("an event stream's bytes are written as they come, not held for the next", async () => {
  const [first, rest] = await writesOf(["a"], ["b"]);
  // The head and the first event, before the second exists.
  assert.ok(first.endsWith("\r\n\r\n9\r\ndata: a\n\n\r\n"), first);
  assert.deepEqual(rest, ["9\r\ndata: b\n\n\r\n0\r\n\r\n"]);
});

Deno.test("an event stream with nothing ready has its head written before the first event", async () => {
  const [first, rest] = await writesOf([], ["a"]);
  assert.ok(first.endsWith("\r\n\r\n"), first);
  // The first event at once: the body's end is not waited for.
  assert.deepEqual(rest, ["9\r\ndata: a\n\n\r\n", "0\r\n\r\n"]);
});
