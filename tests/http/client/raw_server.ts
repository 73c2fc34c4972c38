/**
 * TCP servers on 127.0.0.1 that tests script byte by byte (for the protocol faults a real
 * HTTP server never makes), and socket pairs.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `promise`, or a rejection naming `what` after `ms` (every wait in these tests is bounded). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A request as a {@link Peer} read it. */
export interface RawRequest {
  method: string;
  /** The request target (`/path?query`). */
  target: string;
  /** Header fields, names lower-cased, in the order sent. */
  fields: [string, string][];
  /** The body (as long as its Content-Length). */
  body: Uint8Array;
}

/** The first value of `name` (lower-case) in `request`, or `undefined`. */
export function header(request: RawRequest, name: string): string | undefined {
  return request.fields.find(([n]) => n === name)?.[1];
}

/** One accepted connection, read and written by hand. */
export class Peer {
  readonly conn: Deno.Conn;
  #buf = new Uint8Array(0);
  #closed = false;
  /** Whether the client closed its end (a read came back empty or failed). */
  ended = false;

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  /** Reads once more; `false` at the client's end. */
  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16 * 1024);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch {
      n = null;
    }
    if (n === null) {
      this.ended = true;
      return false;
    }
    const grown = new Uint8Array(this.#buf.length + n);
    grown.set(this.#buf);
    grown.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = grown;
    return true;
  }

  /** The next request (head and Content-Length body); `null` when the client closed first. */
  async request(): Promise<RawRequest | null> {
    let end: number;
    while ((end = decoder.decode(this.#buf).indexOf("\r\n\r\n")) < 0) {
      if (!(await this.#fill())) return null;
    }
    // Heads are ASCII in these tests: the text index is the byte index.
    const head = decoder.decode(this.#buf.subarray(0, end));
    const [requestLine = "", ...lines] = head.split("\r\n");
    const [method = "", target = ""] = requestLine.split(" ");
    const fields = lines.map((line): [string, string] => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    });
    const length = Number(fields.find(([n]) => n === "content-length")?.[1] ?? 0);
    const start = end + 4;
    while (this.#buf.length < start + length) {
      if (!(await this.#fill())) return null;
    }
    const body = this.#buf.slice(start, start + length);
    this.#buf = this.#buf.slice(start + length);
    return { method, target, fields, body };
  }

  /** Writes all of `data`. */
  async send(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }

  /** Waits (at most `ms`) for the client to close its end; bytes it sends meanwhile are kept. */
  async clientClosed(ms = 2000): Promise<void> {
    await within(
      (async () => {
        while (await this.#fill()) { /* keep reading */ }
      })(),
      ms,
      "the client to close its end",
    );
  }

  /** Sends FIN but keeps reading (the client then sees its end of the answer). */
  async closeWrite(): Promise<void> {
    await this.conn.closeWrite();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** A TCP server on 127.0.0.1 (or `hostname`) that hands each connection to `handle`. */
export class RawServer {
  readonly #listener: Deno.TcpListener;
  readonly #tasks: Promise<void>[] = [];
  readonly #accepting: Promise<void>;
  readonly #errors: unknown[] = [];
  #closed = false;
  /** The connections accepted so far, in order. */
  readonly peers: Peer[] = [];

  constructor(handle: (peer: Peer, index: number) => Promise<void>, hostname = "127.0.0.1") {
    const listener = this.#listener = Deno.listen({ hostname, port: 0 });
    this.#accepting = (async () => {
      for (;;) {
        let conn: Deno.Conn;
        try {
          conn = await listener.accept();
        } catch {
          return;
        }
        const peer = new Peer(conn);
        const index = this.peers.push(peer) - 1;
        this.#tasks.push(
          handle(peer, index).catch((e) => {
            if (!peer.ended) this.#errors.push(e);
          }),
        );
      }
    })();
  }

  get port(): number {
    return this.#listener.addr.port;
  }

  /** Connections accepted so far. */
  get accepted(): number {
    return this.peers.length;
  }

  /** `http://127.0.0.1:PORT` (or the given host). */
  url(path = "/", host = `127.0.0.1:${this.port}`): string {
    return `http://${host}${path}`;
  }

  /** Stops listening, closes every connection, waits for the handlers; rethrows the first
   * error a handler threw while its client was still connected. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener.close();
    await this.#accepting;
    for (const peer of this.peers) peer.close();
    await Promise.all(this.#tasks);
    if (this.#errors.length > 0) throw this.#errors[0];
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A connected pair of TCP sockets on 127.0.0.1. */
export async function socketPair(): Promise<{ client: Deno.Conn; server: Deno.Conn }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const [client, server] = await Promise.all([
      Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port }),
      listener.accept(),
    ]);
    return { client, server };
  } finally {
    listener.close();
  }
}

/** A response head and body as one string (`fields` as given; nothing added). */
export function answer(status: string, fields: string[], body = ""): string {
  return `HTTP/1.1 ${status}\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n${body}`;
}
