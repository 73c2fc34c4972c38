/**
 * An accepted upstream answer read within its deadline and size caps: a JSON body, or a stream
 * of server-sent events.
 */
import { type ApiError, upstreamError } from "../../errors.ts";
import type { ClientResponse } from "../../http/client/types.ts";
import { SseDecoder, type SseEvent, SseEventTooLarge } from "../../http/sse.ts";
import type { Deadline } from "./deadline.ts";

/** How an answer's body is read: its deadline, its size caps and the errors for breaking them. */
export interface BodyReading {
  deadline: Deadline;
  /** For streams: the deadline restarts with this many milliseconds before every read. */
  idleMs: number | null;
  /** Bytes the body may have (a JSON answer, or a whole stream). */
  maxBytes: number;
  /** Bytes one event of a stream may have. */
  maxEventBytes: number;
  /** The error for a read of the body that failed. */
  readFailure: (e: unknown) => ApiError;
  /** The error for a body over `maxBytes` ("answer") or an event over `maxEventBytes`. */
  tooLarge: (what: "answer" | "event") => ApiError;
}

/** A body's bytes in a buffer the HTTP client may lend again: `release` once nothing reads
 * them (never calling it is safe; reading them after it is not). */
export interface LentBytes {
  bytes: Uint8Array;
  release: () => void;
}

/** An accepted (2xx) upstream answer whose body is read within the deadline. */
export class UpstreamResponse {
  readonly #response: ClientResponse;
  readonly #reading: BodyReading;
  /** Whether the body was read to its end (nothing is left to abort). */
  #finished = false;
  /** Whether `readEvents` has returned the last events. */
  #ended = false;
  /** Bytes of the stream read so far. */
  #received = 0;
  #decoder: SseDecoder | null = null;
  /** For streams: milliseconds the upstream has left to send its next event, once a read
   * brought none (`null`: the whole timeout, from the next wait). */
  #waitLeft: number | null = null;

  constructor(response: ClientResponse, reading: BodyReading) {
    this.#response = response;
    this.#reading = reading;
  }

  /** The body as JSON; a body that is not JSON, or longer than `max_response_bytes` (read no
   * further than that), is a 502. */
  async json(): Promise<unknown> {
    const text = await this.text();
    try {
      return JSON.parse(text);
    } catch {
      throw upstreamError("The upstream provider answered with a body that is not JSON.");
    }
  }

  /** The body as text; a body longer than `max_response_bytes` (read no further than that) is
   * a 502. */
  async text(): Promise<string> {
    return (await this.#whole((maxBytes) => this.#response.text(maxBytes))).text;
  }

  /** The body's bytes, bounded as {@link text} is, and the call that gives their buffer back
   * for another answer once nothing reads them (see {@link LentBytes}). */
  async lend(): Promise<LentBytes> {
    const { bytes, release } = await this.#whole((maxBytes) => this.#response.bytes(maxBytes));
    return { bytes, release: release ?? (() => {}) };
  }

  /** The whole body as `read` reads it, within `max_response_bytes`. */
  async #whole<T extends { complete: boolean }>(
    read: (maxBytes: number) => Promise<T>,
  ): Promise<T> {
    const { maxBytes } = this.#reading;
    const declared = this.#response.length;
    if (declared !== null && declared > maxBytes) throw this.#reading.tooLarge("answer");
    let body: T;
    try {
      body = await read(maxBytes);
    } catch (e) {
      throw this.#reading.readFailure(e);
    }
    if (!body.complete) throw this.#reading.tooLarge("answer");
    this.#finished = true;
    return body;
  }

  /**
   * The server-sent events that the body's next network read completed (possibly none), or
   * `null` once the body has ended. Grouping by read lets a consumer answer a burst of events
   * with one write. Each read must arrive within the provider's timeout, counted from when it
   * is asked for (the time our client takes to ask for more is not the upstream's); a broken
   * connection is a 502, a stall a 504, a stream over `max_response_bytes` or an event over
   * `max_event_bytes` a 502 (then `close` cuts the connection).
   */
  async readEvents(): Promise<SseEvent[] | null> {
    for (;;) {
      const events = this.takeEvents();
      if (events !== undefined) return events;
      await this.more();
    }
  }

  /** The events of the bytes that have arrived (see {@link readEvents}), `null` at the end, or
   * `undefined` when {@link more} must wait for more. Waits for nothing. */
  takeEvents(): SseEvent[] | null | undefined {
    if (this.#ended) return null;
    const bytes = this.#take();
    if (bytes === undefined) return undefined;
    this.#decoder ??= new SseDecoder(this.#reading.maxEventBytes);
    if (bytes !== null) {
      let events: SseEvent[];
      try {
        events = this.#decoder.decode(bytes);
      } catch (e) {
        throw e instanceof SseEventTooLarge ? this.#reading.tooLarge("event") : e;
      }
      // An event restarts the upstream's time; comments and pieces of an event do not.
      if (events.length > 0) this.#waitLeft = null;
      return events;
    }
    this.#ended = this.#finished = true;
    const rest = this.#decoder.end();
    return rest.length > 0 ? rest : null;
  }

  /**
   * For a stream framed otherwise than as SSE (AWS's event stream): the messages `decode` finds
   * in the bytes that have arrived (possibly none), `null` at the end, or `undefined` when
   * {@link more} must wait for more. Counted against `max_response_bytes`; a message restarts
   * the upstream's time as an SSE event does. Waits for nothing.
   */
  takeDecoded<M>(decode: (bytes: Uint8Array) => M[]): M[] | null | undefined {
    if (this.#ended) return null;
    const bytes = this.#take();
    if (bytes === undefined) return undefined;
    if (bytes === null) {
      this.#ended = this.#finished = true;
      return null;
    }
    const messages = decode(bytes);
    if (messages.length > 0) this.#waitLeft = null;
    return messages;
  }

  /** The body's bytes that have arrived (counted against `max_response_bytes`), `null` at its
   * end, or `undefined` when {@link more} must wait. */
  #take(): Uint8Array | null | undefined {
    let bytes: Uint8Array | null | undefined;
    try {
      // Taking parses the body's framing (chunk sizes), which a broken upstream can get wrong.
      bytes = this.#response.take();
    } catch (e) {
      throw this.#reading.readFailure(e);
    }
    if (bytes) {
      this.#received += bytes.byteLength;
      if (this.#received > this.#reading.maxBytes) throw this.#reading.tooLarge("answer");
    }
    return bytes;
  }

  /** Waits for more of the body, within the provider's timeout (see {@link readEvents}). (A
   * plain function over the read's promise: an async one cost a frame for every chunk.) */
  more(): Promise<void> {
    const { deadline, idleMs } = this.#reading;
    if (idleMs !== null) deadline.arm(this.#waitLeft ?? idleMs);
    return this.#response.more().then(this.#arrived, this.#failed);
  }

  /** After a read: the clock stops while our client is busy, keeping what is left of it when
   * the read brought no event (a keep-alive comment every few seconds must not hold a stream
   * open for ever). */
  readonly #arrived = (): void => {
    const { deadline, idleMs } = this.#reading;
    if (idleMs === null) return;
    this.#waitLeft = deadline.remaining();
    deadline.disarm();
  };

  readonly #failed = (e: unknown): never => {
    this.#arrived();
    throw this.#reading.readFailure(e);
  };

  /**
   * For a consumer that has all it needs (the stream's end marker came) before the body ended:
   * reads what is left in the background, for at most a second, so that the connection can go
   * back to the pool instead of being cut; then closes.
   */
  release(): void {
    if (this.#finished || this.#reading.deadline.signal.aborted) {
      return this.close();
    }
    this.#reading.deadline.arm(Math.min(1000, this.#reading.idleMs ?? 1000));
    (async () => {
      while ((await this.#response.read()) !== null) { /* discard */ }
      this.#finished = true;
    })().catch(() => {}).finally(() => this.close());
  }

  /** Aborts the upstream call if it is still running and releases the deadline timer. */
  close(): void {
    if (!this.#finished) this.#response.cancel();
    this.#reading.deadline.close(this.#finished);
  }
}
