/**
 * One client connection of the HTTP/1.1 server: requests read one after another, each handed to
 * the handler as a web-standard `Request` and its `Response` written back.
 *
 * While a request is being served the socket is always being read (into a bounded buffer), so a
 * client that leaves is noticed at once, whatever the size of its body and whether or not its
 * response has started: the request's `signal` aborts. Deno's own server stops watching the
 * socket once a body larger than its first read has been read, until the response is written,
 * so a client leaving a non-streamed call went unnoticed until the upstream answered.
 */
import { concatBytes } from "../bytes.ts";
import type { Expiries, Expiry } from "../expiries.ts";
import { isHostValue, PLACEHOLDER } from "../request_url.ts";
import { BytesResponse } from "../response.ts";
import { ChunkedDecoder } from "./chunked.ts";
import { headEnd, HeadError, parseHead, type RequestHead } from "./head.ts";
import {
  chunk,
  type DateField,
  LAST_CHUNK,
  latin1Bytes,
  type ResponseFraming,
  responseHead,
} from "./response_head.ts";

/** What serves a request. */
export type Handler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** What every connection of one server shares. */
export interface ConnectionContext {
  handler: Handler;
  /** The origin of a request that names no host (`http://` and the listener's address). */
  origin: string;
  timers: Expiries;
  date: DateField;
  /** How long a request head may take once its first byte came. */
  headTimeoutMs: number;
  /** How long a connection may wait between requests. */
  idleTimeoutMs: number;
  /** How long a write may wait for a client that reads nothing. */
  sendTimeoutMs: number;
  /** A handler that threw, or a response body that failed. */
  onError(error: unknown): void;
  /** Whether the server is shutting down (answer what is asked, then close). */
  draining(): boolean;
}

/** The largest request head. */
export const MAX_HEAD = 64 * 1024;
/** The read buffer of a connection (what an idle one holds: a head of some headers fits), and
 * of one that reads a body larger than that. */
const READ_SIZE = 4 * 1024;
const BODY_READ_SIZE = 64 * 1024;
/** Responses written as they come; any other body is written whole. */
const EVENT_STREAM = /^text\/event-stream\b/i;
/** Bodies up to this size are copied after the head into one write; larger ones are written
 * on their own (copying 820 KB cost more than the second write). */
const JOINED_BODY_BYTES = 64 * 1024;

/** The state of one request's body, as the response writer needs it. */
interface BodyState {
  /** Read to its end (or it had none). */
  complete: boolean;
  /** Expect: 100-continue still to be answered on the first read. */
  expectContinue: boolean;
}

/** Serves one connection (see the module comment). */
export class HttpConnection {
  readonly #conn: Deno.Conn;
  readonly #ctx: ConnectionContext;
  readonly #remote: Deno.NetAddr;
  #buf = new Uint8Array(READ_SIZE);
  /** The unread bytes are `#buf[#start, #end)`. */
  #start = 0;
  #end = 0;
  #reading = false;
  #eof = false;
  #closed = false;
  /** Waiting for a request head with nothing of it read yet. */
  #idle = true;
  #wake: (() => void) | null = null;
  /** The request whose response is not written yet: aborted if the client leaves. */
  #active: AbortController | null = null;
  /** When the connection is closed for want of progress: set while waiting for a head (idle,
   * then head limit) and while a write waits; held (`Infinity`) otherwise. One per connection,
   * moved rather than made anew (a new limit per write cost ~1 µs a chunk). */
  readonly #deadline: Expiry;

  constructor(conn: Deno.Conn, ctx: ConnectionContext) {
    this.#conn = conn;
    this.#ctx = ctx;
    this.#remote = conn.remoteAddr as Deno.NetAddr;
    this.#deadline = ctx.timers.after(Infinity, () => this.close());
  }

  /** Serves requests until the connection ends. */
  async serve(): Promise<void> {
    try {
      while (!this.#closed) {
        let head: RequestHead | null;
        try {
          head = await this.#nextHead();
        } catch (e) {
          if (e instanceof HeadError) await this.#refuse(e.status, e.message);
          return;
        }
        if (head === null || !(await this.#exchange(head))) return;
      }
    } catch {
      // A socket error ends the connection.
    } finally {
      this.close();
    }
  }

  /** Closes the connection if it is between requests (the server is shutting down). */
  closeIfIdle(): void {
    if (this.#idle && this.#start === this.#end) this.close();
  }

  /** Closes the connection (a read in flight ends with an error, which is expected). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#deadline.clear();
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
    this.#notify();
  }

  // --- reading -------------------------------------------------------------------------------

  /** Starts a read into the free end of the buffer, unless one is in flight, the peer has
   * closed, or the buffer is full (then reading waits for the bytes to be used). */
  #pump(): void {
    if (this.#reading || this.#eof || this.#closed) return;
    this.#makeRoom(this.#buf.length);
    if (this.#end === this.#buf.length) return;
    this.#reading = true;
    this.#conn.read(this.#buf.subarray(this.#end)).then(
      (n) => {
        this.#reading = false;
        if (n === null) this.#peerClosed();
        else this.#end += n;
        // While a request is served, keep a read in flight: that is what notices a leave. A
        // reader that was waiting (the body) reads on when it wants more.
        if (this.#wake !== null) this.#notify();
        else if (this.#active !== null) this.#pump();
      },
      () => {
        this.#reading = false;
        this.#peerClosed();
        this.#notify();
      },
    );
  }

  /** Moves unread bytes to the front, or grows the buffer up to `limit` when it is full. Only
   * while no read is in flight (a read holds a view of the buffer). */
  #makeRoom(limit: number): void {
    if (this.#reading) return;
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
    } else if (this.#end === this.#buf.length) {
      if (this.#start > 0) {
        this.#buf.copyWithin(0, this.#start, this.#end);
        this.#end -= this.#start;
        this.#start = 0;
      } else if (this.#buf.length < limit) {
        const grown = new Uint8Array(Math.min(limit, this.#buf.length * 2));
        grown.set(this.#buf.subarray(0, this.#end));
        this.#buf = grown;
      }
    }
  }

  /** Gives back a buffer grown for a body once it is empty and no read holds it: an idle
   * connection holds 4 KB (64 KB each cost 2,000 idle connections 80 MB). */
  #shrink(): void {
    if (!this.#reading && this.#start === this.#end && this.#buf.length > READ_SIZE) {
      this.#buf = new Uint8Array(READ_SIZE);
      this.#start = this.#end = 0;
    }
  }

  /** Resolves once more bytes arrived, the peer closed, or nothing more can be read. */
  #more(): Promise<void> {
    this.#pump();
    if (!this.#reading) return Promise.resolve();
    return new Promise((resolve) => (this.#wake = resolve));
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #peerClosed(): void {
    this.#eof = true;
    this.#active?.abort(new DOMException("the client closed the connection", "AbortError"));
  }

  /** The next request's head, or `null` when the connection ends between requests. */
  async #nextHead(): Promise<RequestHead | null> {
    this.#idle = true;
    this.#deadline.restart(this.#ctx.idleTimeoutMs);
    this.#shrink();
    try {
      let scanned = 0;
      for (;;) {
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        const buf = this.#buf;
        while (this.#start < this.#end && (buf[this.#start] === 13 || buf[this.#start] === 10)) {
          this.#start++;
        }
        if (this.#start < this.#end) {
          if (this.#idle) {
            this.#idle = false;
            this.#deadline.restart(this.#ctx.headTimeoutMs);
          }
          const end = headEnd(buf, Math.max(this.#start, scanned - 3), this.#end);
          if (end !== -1) {
            const bytes = buf.subarray(this.#start, end);
            this.#start = end;
            return parseHead(bytes);
          }
          scanned = this.#end;
          if (this.#end - this.#start >= MAX_HEAD) {
            throw new HeadError(431, "the request head is larger than 64 KB");
          }
        }
        if (this.#eof || this.#closed) return null;
        if (this.#idle && this.#ctx.draining()) return null;
        const before = this.#start;
        this.#makeRoom(MAX_HEAD);
        scanned -= before - this.#start;
        await this.#more();
      }
    } finally {
      this.#deadline.at = Infinity;
    }
  }

  // --- one request ---------------------------------------------------------------------------

  /** Serves one request; whether the connection may carry another. */
  async #exchange(head: RequestHead): Promise<boolean> {
    const controller = new AbortController();
    this.#active = controller;
    this.#idle = false;
    const state: BodyState = {
      complete: head.body.kind === "none",
      expectContinue: head.expectContinue,
    };
    const hasBody = head.body.kind !== "none" && head.method !== "GET" && head.method !== "HEAD";
    if (
      hasBody &&
      (head.body.kind === "chunked" ||
        (head.body.kind === "length" && head.body.length > READ_SIZE))
    ) {
      this.#makeRoom(BODY_READ_SIZE);
      if (this.#buf.length < BODY_READ_SIZE && !this.#reading) {
        const grown = new Uint8Array(BODY_READ_SIZE);
        grown.set(this.#buf.subarray(this.#start, this.#end));
        this.#end -= this.#start;
        this.#start = 0;
        this.#buf = grown;
      }
    }
    let body: BodyInit | null = null;
    if (hasBody) {
      const { body: framing } = head;
      if (framing.kind === "length" && this.#end - this.#start >= framing.length) {
        // The whole body came with the head: handed over as bytes (a stream cost ~3 µs more).
        body = this.#buf.slice(this.#start, this.#start + framing.length);
        this.#start += framing.length;
        state.complete = true;
        state.expectContinue = false;
      } else {
        body = this.#body(head, state);
      }
    }
    const init: RequestInit = {
      method: head.method,
      headers: head.fields,
      body,
      signal: controller.signal,
    };
    let request: Request;
    try {
      request = new Request(this.#url(head), init);
    } catch {
      // A Host that passed the pattern but makes no URL (`a%20b`): the app answers it.
      if (head.target[0] !== "/") {
        this.#active = null;
        await this.#refuse(400, "the request-target is not a valid URL");
        return false;
      }
      request = new Request(PLACEHOLDER + head.target, init);
    }
    // Read the socket while the handler works: a body is read through the same buffer, and a
    // client that leaves is seen (the read ends), unless it sent more than the buffer holds.
    this.#pump();
    let completed: PromiseWithResolvers<void> | null = null;
    const info = {
      remoteAddr: this.#remote,
      /** Settles once the response has been written (or could not be). */
      get completed(): Promise<void> {
        return (completed ??= Promise.withResolvers<void>()).promise;
      },
    };
    let response: Response;
    try {
      response = await this.#ctx.handler(request, info);
      if (!(response instanceof Response)) throw new TypeError("the handler gave no Response");
    } catch (e) {
      this.#ctx.onError(e);
      response = errorResponse(500, "internal_error", "The server had an error.");
    }
    try {
      return await this.#respond(head, response, state, controller);
    } finally {
      // Its writes have settled: a body in lent buffers gives them back.
      if (response instanceof BytesResponse) response.release();
      (completed as PromiseWithResolvers<void> | null)?.resolve();
    }
  }

  /** The request's URL: an absolute-form target as it is, else `http://` + Host + target. A Host
   * that is no host gets {@link PLACEHOLDER}, so it cannot move the path. */
  #url(head: RequestHead): string {
    const { target, host } = head;
    if (target[0] !== "/") return target;
    if (host === null || host === "") return this.#ctx.origin + target;
    // One that has the form but makes no URL (`x:99999`, `a%20b`) gets it in #exchange.
    return isHostValue(host) ? "http://" + host + target : PLACEHOLDER + target;
  }

  /** The request's body as a stream that reads the socket as it is pulled. */
  #body(head: RequestHead, state: BodyState): ReadableStream<Uint8Array> {
    let remaining = head.body.kind === "length" ? head.body.length : Infinity;
    const decoder = head.body.kind === "chunked" ? new ChunkedDecoder() : null;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (state.expectContinue) {
          state.expectContinue = false;
          await this.#write(CONTINUE);
        }
        for (;;) {
          if (this.#start < this.#end) {
            if (decoder === null) {
              const take = Math.min(remaining, this.#end - this.#start);
              controller.enqueue(this.#buf.slice(this.#start, this.#start + take));
              this.#start += take;
              remaining -= take;
            } else {
              let got = false;
              const used = decoder.decode(this.#buf.subarray(this.#start, this.#end), (data) => {
                controller.enqueue(data.slice());
                got = true;
              });
              this.#start += used;
              if (decoder.done) remaining = 0;
              else if (!got) {
                await this.#more();
                continue;
              }
            }
            if (remaining === 0) {
              state.complete = true;
              controller.close();
              this.#shrink();
              this.#pump();
            }
            return;
          }
          if (this.#eof || this.#closed) {
            controller.error(new DOMException("the client closed the connection", "AbortError"));
            return;
          }
          await this.#more();
        }
      },
    }, { highWaterMark: 0 });
  }

  // --- writing -------------------------------------------------------------------------------

  /** Writes `response`; whether the connection may carry another request. */
  async #respond(
    head: RequestHead,
    response: Response,
    state: BodyState,
    controller: AbortController,
  ): Promise<boolean> {
    const { status } = response;
    const noContent = status === 204 || status === 304 || status < 200;
    const wantsClose = !head.keepAlive || this.#ctx.draining() ||
      /(^|,)\s*close\s*(,|$)/i.test(response.headers.get("connection") ?? "");
    const close = () => wantsClose || !state.complete || this.#eof;
    const source = response.body;
    if (source === null || noContent || head.method === "HEAD") {
      source?.cancel().catch(() => {});
      this.#active = null;
      const length = head.method === "HEAD" ? response.headers.get("content-length") : "0";
      const framing: ResponseFraming = noContent || length === null || !/^\d+$/.test(length)
        ? { kind: "none" }
        : { kind: "length", length: Number(length) };
      const closing = close();
      await this.#write(this.#head(response, framing, closing));
      return !closing;
    }
    if (!EVENT_STREAM.test(response.headers.get("content-type") ?? "")) {
      // Every body but an event stream is written whole, with its length, in one write with the
      // head (reading a body given whole through a stream reader cost ~10 µs a request more).
      let parts: readonly Uint8Array[];
      try {
        parts = response instanceof BytesResponse ? response.parts : [await response.bytes()];
      } catch (e) {
        if (!controller.signal.aborted) this.#ctx.onError(e);
        this.#active = null;
        return false;
      }
      this.#active = null;
      const closing = close();
      let length = 0;
      for (const part of parts) length += part.length;
      const framing: ResponseFraming = { kind: "length", length };
      if (length <= JOINED_BODY_BYTES) {
        await this.#write(this.#head(response, framing, closing, concatBytes(parts)));
      } else {
        // A large body goes in writes of its own rather than being copied after the head.
        await this.#write(this.#head(response, framing, closing));
        for (const part of parts) await this.#write(part);
      }
      return !closing;
    }
    // An event stream: chunked (close-delimited for an HTTP/1.0 client), each piece as it comes
    // (pieces ready together in one write).
    const reader = source.getReader();
    const cancel = () => void reader.cancel(controller.signal.reason).catch(() => {});
    if (controller.signal.aborted) cancel();
    else controller.signal.addEventListener("abort", cancel, { once: true });
    try {
      const chunked = head.minor === 1;
      const closing = !chunked || close();
      const framing: ResponseFraming = chunked ? { kind: "chunked" } : { kind: "close-delimited" };
      const frame = chunked ? chunk : (bytes: Uint8Array) => bytes;
      // The first bytes are written as soon as they come, with the head if they are ready
      // (else the head goes alone): what follows may take time to make (the rest of a burst the
      // upstream sent together). After them, what the body has ready at once joins the bytes
      // before it in one write (the last batch, `[DONE]` and the chunked end): an unloaded
      // 20-chunk stream went out in two writes to the client instead of four (strace).
      const unsent = new Unsent(this.#head(response, framing, closing));
      let started = false;
      for (;;) {
        // A read the body answers at once (a batch it had ready, or its end) has settled by
        // the next microtask; one that has not waits, after what is unsent has been written.
        const read = reader.read();
        let next: ReadableStreamReadResult<Uint8Array> | undefined;
        read.then((result) => (next = result), ignore);
        await null;
        if (next === undefined) {
          if (unsent.size > 0) await this.#write(unsent.take());
          next = await read;
        }
        if (next.done) break;
        const bytes = bytesOf(next.value);
        // An empty chunk would read as the chunked body's end.
        if (bytes.length > 0) unsent.add(frame(bytes));
        if ((bytes.length > 0 && !started) || unsent.size >= JOINED_BODY_BYTES) {
          started = true;
          await this.#write(unsent.take());
        }
      }
      this.#active = null;
      if (chunked) unsent.add(LAST_CHUNK);
      if (unsent.size > 0) await this.#write(unsent.take());
      return !closing;
    } catch (e) {
      // The body failed or the client left mid-way: cut the connection, so the client sees an
      // incomplete response rather than a complete wrong one.
      if (!controller.signal.aborted && !this.#eof && !this.#closed) this.#ctx.onError(e);
      if (this.#active === controller && !controller.signal.aborted) {
        controller.abort(new DOMException("the response could not be written", "AbortError"));
      }
      cancel();
      return false;
    } finally {
      this.#active = null;
      controller.signal.removeEventListener("abort", cancel);
    }
  }

  /** The response's head (and `body`, whole, after it). */
  #head(
    response: Response,
    framing: ResponseFraming,
    close: boolean,
    body?: Uint8Array,
  ): Uint8Array {
    return responseHead(
      response.status,
      response.statusText,
      response.headers,
      framing,
      close,
      this.#ctx.date.value(),
      body,
    );
  }

  /** Writes all of `bytes`; a client that takes none of them for `sendTimeoutMs` (it stopped
   * reading) has its connection closed, which fails the write. */
  async #write(bytes: Uint8Array): Promise<void> {
    const deadline = this.#deadline;
    try {
      for (let at = 0; at < bytes.length;) {
        deadline.restart(this.#ctx.sendTimeoutMs);
        at += await this.#conn.write(bytes.subarray(at));
      }
    } finally {
      deadline.at = Infinity;
    }
  }

  /** Answers a request that cannot be served (a malformed head) and ends the connection. */
  async #refuse(status: number, message: string): Promise<void> {
    const response = errorResponse(status, "invalid_request", message);
    const body = new Uint8Array(await response.arrayBuffer());
    const framed = this.#head(response, { kind: "length", length: body.length }, true, body);
    try {
      await this.#write(framed);
    } catch {
      // The client is gone.
    }
  }
}

const CONTINUE = latin1Bytes("HTTP/1.1 100 Continue\r\n\r\n");

/** An error in OpenAI's shape (what most of the gateway's callers read). */
function errorResponse(status: number, code: string, message: string): Response {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  return Response.json({ error: { message, type, param: null, code } }, { status });
}

/** For a read whose failure is thrown where it is awaited. */
function ignore(): void {}

/** Bytes of a streamed response not written yet, joined into one write. */
class Unsent {
  #parts: Uint8Array[];
  size: number;

  constructor(first: Uint8Array) {
    this.#parts = [first];
    this.size = first.length;
  }

  add(bytes: Uint8Array): void {
    this.#parts.push(bytes);
    this.size += bytes.length;
  }

  /** The bytes, joined, and none left. */
  take(): Uint8Array {
    const parts = this.#parts;
    this.#parts = [];
    this.size = 0;
    return parts.length === 1 ? parts[0]! : concatBytes(parts);
  }
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new TypeError("a response body gave a chunk that is not a Uint8Array");
}
