/**
 * An HTTP/1.1 client over Deno's sockets (`Deno.connect`, `Deno.connectTls`), with kept-alive
 * connections per origin. It exists for speed: a non-streamed model call through it costs
 * ~17 µs of CPU against ~45 µs through `fetch`, and a paced stream relayed through it ~0.8×
 * the CPU (bench notes in the README, "Performance"), because the body's bytes go from the
 * socket to the SSE decoder with no web stream in between.
 */
import type { BytesPrefix, TextPrefix } from "../byte_reader.ts";
import { BytePool } from "../byte_pool.ts";
import { concatBytes } from "../bytes.ts";
import { BodyCut, type BodyReader, bodyReader, LengthBody } from "./body.ts";
import type { Http1Connection } from "./connection.ts";
import { ACCEPT_ENCODING, IDENTITY, refuseEncoded } from "./content_encoding.ts";
import { ConnectionPool, type Connector, type Origin } from "./pool.ts";
import {
  type BodyFraming,
  bodyFraming,
  FIELD_NAME,
  joined,
  keepsAlive,
  type ResponseHead,
} from "./response_head.ts";
import { refuseTransferCoded } from "./transfer_encoding.ts";
import type { ClientRequest, ClientResponse, HttpClient } from "./types.ts";

/** Options for {@link NativeHttpClient}. */
export interface NativeHttpClientOptions {
  /** Root certificates (PEM) trusted besides the system's, for TLS upstreams. */
  caCerts?: string[];
  /** Idle connections kept per origin (default 256). */
  maxIdlePerOrigin?: number;
  /** Opens sockets (default: `Deno.connect`, or `Deno.connectTls` for https). */
  connect?: Connector;
}

const encoder = new TextEncoder();
/** A request field value must hold no CR, LF or NUL (they would inject fields). */
const BAD_VALUE = /[\r\n\0]/;
/** What every request says unless its headers say otherwise (as fetch does), and identity,
 * which they cannot change: a compressed answer would need inflating in JavaScript. */
const DEFAULTS: Readonly<Record<string, string>> = {
  "accept": "*/*",
  [ACCEPT_ENCODING]: IDENTITY,
  "user-agent": `Deno/${Deno.version.deno}`,
};

/** A body part this long or longer is written on its own rather than copied into one message
 * with the head (copying a 276 KB agent turn cost ~4% of passing it on; a write, less). */
const JOINED_PART_BYTES = 64 * 1024;

/** A request's writes: the head and the body's small parts joined (one packet for a small
 * request), each large part as it is. */
export function writes(head: Uint8Array, body: readonly Uint8Array[] | null): Uint8Array[] {
  const out: Uint8Array[] = [];
  let joined: Uint8Array[] = [head];
  for (const part of body ?? []) {
    if (part.length < JOINED_PART_BYTES) {
      joined.push(part);
      continue;
    }
    if (joined.length > 0) out.push(concatBytes(joined));
    out.push(part);
    joined = [];
  }
  if (joined.length > 0) out.push(concatBytes(joined));
  return out;
}

/** HTTP/1.1 over sockets of its own. */
export class NativeHttpClient implements HttpClient {
  readonly #pool: ConnectionPool;
  /** Buffers for bodies read whole. */
  readonly #buffers = new BytePool();
  /** The encoded header lines of each headers object seen (providers reuse theirs). */
  readonly #fieldLines = new WeakMap<object, string>();
  /** Each URL called: its origin and request target (a provider calls a few URLs, over and
   * over: parsing each call's URL cost ~1 KB of garbage). */
  readonly #targets = new Map<string, { origin: Origin; target: string }>();

  constructor(options: NativeHttpClientOptions = {}) {
    const caCerts = options.caCerts;
    this.#pool = new ConnectionPool(
      options.connect ?? ((origin, signal) => connect(origin, signal, caCerts)),
      options.maxIdlePerOrigin ?? 256,
    );
  }

  async request(request: ClientRequest): Promise<ClientResponse> {
    const { signal, method } = request;
    signal.throwIfAborted();
    const { origin, target } = this.#target(request.url);
    const body = request.body === undefined
      ? null
      : typeof request.body === "string"
      ? [encoder.encode(request.body)]
      : request.body instanceof Uint8Array
      ? [request.body]
      : request.body;
    let length = 0;
    for (const part of body ?? []) length += part.length;
    const head = `${method} ${target} HTTP/1.1\r\nhost: ${origin.host}\r\n` +
      this.#fields(request.headers) +
      (body === null
        ? (method === "GET" ? "" : "content-length: 0\r\n")
        : `content-length: ${length}\r\n`) +
      "\r\n";
    const message = writes(encoder.encode(head), body);
    // A kept-alive connection that the server closed just as it was taken fails before any
    // byte of an answer: the request is sent once more, on a new connection.
    for (let attempt = 0;; attempt++) {
      // The retry's connection is a new one: the other idle ones may have been closed too.
      const connection = await this.#pool.acquire(origin, signal, attempt > 0);
      const reused = connection.requests > 0;
      connection.requests++;
      const received = connection.reader.received;
      const abort = () => connection.close();
      signal.addEventListener("abort", abort, { once: true });
      // Aborted before the listener was added (as the connection opened): it never fires.
      if (signal.aborted) abort();
      let answer: ResponseHead | null;
      let framing: BodyFraming = { kind: "none" };
      try {
        for (const bytes of message) await connection.write(bytes);
        answer = await connection.readHead();
        // A head whose body cannot be delimited (conflicting Content-Lengths), has a transfer
        // coding besides chunked, or is compressed fails here, so that its connection is closed
        // with it.
        if (answer !== null) {
          framing = bodyFraming(answer, method);
          if (framing.kind !== "none") {
            refuseTransferCoded(joined(answer, "transfer-encoding"));
            refuseEncoded(joined(answer, "content-encoding"));
          }
        }
      } catch (e) {
        signal.removeEventListener("abort", abort);
        connection.close();
        signal.throwIfAborted();
        if (reused && attempt === 0 && connection.reader.received === received) continue;
        throw e;
      }
      if (answer === null) {
        signal.removeEventListener("abort", abort);
        connection.close();
        if (reused && attempt === 0) continue;
        throw new BodyCut();
      }
      return new NativeResponse(answer, framing, connection, {
        pool: this.#pool,
        buffers: this.#buffers,
        origin,
        signal,
        abort,
      });
    }
  }

  close(): void {
    this.#pool.close();
  }

  trim(): void {
    this.#buffers.trim();
  }

  #target(text: string): { origin: Origin; target: string } {
    let known = this.#targets.get(text);
    if (known === undefined) {
      const url = new URL(text);
      known = { origin: originOf(url), target: url.pathname + url.search };
      if (this.#targets.size >= 1000) this.#targets.clear();
      this.#targets.set(text, known);
    }
    return known;
  }

  /** `headers` (and the defaults they leave unset) as field lines, checked once per object. */
  #fields(headers: Readonly<Record<string, string>>): string {
    let lines = this.#fieldLines.get(headers);
    if (lines !== undefined) return lines;
    lines = "";
    const given = new Set<string>();
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (
        lower === "host" || lower === "content-length" || lower === "transfer-encoding" ||
        lower === ACCEPT_ENCODING
      ) continue;
      if (!FIELD_NAME.test(name) || BAD_VALUE.test(value)) {
        throw new TypeError(`Header "${name}" has an invalid name or value.`);
      }
      given.add(lower);
      lines += `${name}: ${value.trim()}\r\n`;
    }
    for (const [name, value] of Object.entries(DEFAULTS)) {
      if (!given.has(name)) lines += `${name}: ${value}\r\n`;
    }
    this.#fieldLines.set(headers, lines);
    return lines;
  }
}

interface Keeping {
  pool: ConnectionPool;
  buffers: BytePool;
  origin: Origin;
  signal: AbortSignal;
  /** The signal's listener that closes the connection. */
  abort: () => void;
}

/** An answer read from its connection; the connection goes back to the pool once the body
 * has been read to its end (when the server keeps it alive). */
class NativeResponse implements ClientResponse {
  readonly status: number;
  readonly length: number | null;
  readonly #head: ResponseHead;
  readonly #body: BodyReader;
  readonly #connection: Http1Connection;
  readonly #keeping: Keeping;
  readonly #keepAlive: boolean;
  #headers: Headers | null = null;
  #over = false;

  constructor(
    head: ResponseHead,
    framing: BodyFraming,
    connection: Http1Connection,
    keeping: Keeping,
  ) {
    this.status = head.status;
    this.#head = head;
    this.#connection = connection;
    this.#keeping = keeping;
    this.length = framing.kind === "length" ? framing.bytes : null;
    this.#keepAlive = keepsAlive(head, framing);
    this.#body = bodyReader(connection.reader, framing);
    if (this.#body.done) this.#end();
  }

  get headers(): Headers {
    return this.#headers ??= new Headers(this.#head.fields);
  }

  take(): Uint8Array | null | undefined {
    if (this.#over) return null;
    let piece: Uint8Array | null | undefined;
    try {
      piece = this.#body.take();
    } catch (e) {
      this.cancel();
      throw e;
    }
    if (this.#body.done) {
      // The last piece is a view of the connection's buffer, which may carry another
      // request once back in the pool, before the caller is done with it: a copy.
      if (piece) piece = piece.slice();
      this.#end();
    }
    return piece;
  }

  more(): Promise<void> {
    return this.#connection.reader.fill().then(this.#filled, this.#failed);
  }

  async read(): Promise<Uint8Array | null> {
    for (;;) {
      const piece = this.take();
      if (piece !== undefined) return piece;
      await this.more();
    }
  }

  /** After a read: the source's end is the body's end, or a cut. */
  readonly #filled = (more: boolean): void => {
    if (more) return;
    try {
      this.#body.sourceEnded();
    } catch (e) {
      this.cancel();
      throw e;
    }
  };

  /** A read failed: the connection is closed; an abort is reported as its reason. */
  readonly #failed = (e: unknown): never => {
    this.cancel();
    this.#keeping.signal.throwIfAborted();
    throw e;
  };

  async text(maxBytes: number): Promise<TextPrefix> {
    const body = this.#body;
    if (body instanceof LengthBody && body.left <= maxBytes) {
      // A declared length: read straight into one array and decode it once.
      const bytes = await this.#rest(body);
      const text = new TextDecoder().decode(bytes);
      this.#keeping.buffers.give(bytes);
      return { text, complete: true };
    }
    const decoder = new TextDecoder();
    let text = "";
    let left = maxBytes;
    for (let piece = await this.read(); piece !== null; piece = await this.read()) {
      if (piece.length > left) {
        text += decoder.decode(piece.subarray(0, left));
        this.cancel();
        return { text, complete: false };
      }
      left -= piece.length;
      text += decoder.decode(piece, { stream: true });
    }
    return { text: text + decoder.decode(), complete: true };
  }

  async bytes(maxBytes: number): Promise<BytesPrefix> {
    const body = this.#body;
    if (body instanceof LengthBody && body.left <= maxBytes) {
      const bytes = await this.#rest(body);
      const buffers = this.#keeping.buffers;
      return { bytes, complete: true, release: () => buffers.give(bytes) };
    }
    const pieces: Uint8Array[] = [];
    let left = maxBytes;
    for (let piece = await this.read(); piece !== null; piece = await this.read()) {
      if (piece.length > left) {
        pieces.push(piece.slice(0, left));
        this.cancel();
        return { bytes: concatBytes(pieces), complete: false };
      }
      left -= piece.length;
      // A piece is valid until the next read: kept as a copy.
      pieces.push(piece.slice());
    }
    return { bytes: concatBytes(pieces), complete: true };
  }

  /** The rest of a body of declared length, read straight into one lent array (not given
   * back when the read fails: a read may still be filling it). */
  async #rest(body: LengthBody): Promise<Uint8Array> {
    try {
      const bytes = await body.rest(this.#keeping.buffers.take(body.left));
      this.#end();
      return bytes;
    } catch (e) {
      this.cancel();
      this.#keeping.signal.throwIfAborted();
      throw e;
    }
  }

  cancel(): void {
    if (this.#over) return;
    this.#over = true;
    this.#keeping.signal.removeEventListener("abort", this.#keeping.abort);
    this.#connection.close();
  }

  /** The body was read to its end: the connection is reused or closed. */
  #end(): void {
    if (this.#over) return;
    this.#over = true;
    const { pool, origin, signal, abort } = this.#keeping;
    signal.removeEventListener("abort", abort);
    // Bytes beyond the answer are a server that broke framing: no reuse.
    if (this.#keepAlive && this.#connection.reader.available === 0) {
      pool.release(origin, this.#connection);
    } else {
      this.#connection.close();
    }
  }
}

/** Where requests to `url` go (an http: or https: URL). */
function originOf(url: URL): Origin {
  const tls = url.protocol === "https:";
  if (!tls && url.protocol !== "http:") {
    throw new TypeError(`Only http: and https: URLs can be called, not ${url.protocol}`);
  }
  // `URL.hostname` keeps an IPv6 address's brackets; sockets want it bare.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return {
    key: `${url.protocol}//${url.host}`,
    hostname,
    port: Number(url.port || (tls ? 443 : 80)),
    tls,
    host: url.host,
  };
}

/** Opens a socket to `origin` (TLS for https); `signal` stops the attempt. */
async function connect(
  origin: Origin,
  signal: AbortSignal,
  caCerts: string[] | undefined,
): Promise<Deno.Conn> {
  const { hostname, port } = origin;
  const opening: Promise<Deno.Conn> = origin.tls
    ? Deno.connectTls({
      hostname,
      port,
      alpnProtocols: ["http/1.1"],
      ...(caCerts ? { caCerts } : {}),
    })
    : Deno.connect({ hostname, port, signal });
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const conn = await Promise.race([opening, aborted]);
    if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(true);
    return conn;
  } catch (e) {
    // A connection that opens after the abort is closed as it arrives.
    opening.then((conn) => conn.close(), () => {});
    throw e;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
