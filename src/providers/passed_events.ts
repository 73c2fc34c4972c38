/**
 * A passed-through stream (DESIGN §6.2's same-protocol path) as the front door pulls it: one
 * batch of SSE bytes per upstream read that completed events, each event read by the style's
 * {@link EventReading} (re-encoded as it came, with the client's fields written in, and what it
 * reports: usage, an error, the final response). Stopping early (`return`) aborts the upstream
 * call.
 */
import type { Usage } from "../canonical/result.ts";
import type { ApiError } from "../errors.ts";
import type { SseEvent } from "../http/sse.ts";
import type { PassedBatch } from "./types.ts";
import type { UpstreamResponse } from "./upstream/response.ts";

/** What one upstream event adds to the stream. */
export interface PassedEvent {
  /** The event's data as forwarded, or `null` to leave the event out. */
  data: string | null;
  /** The event's name as forwarded, when not the upstream's. */
  name?: string;
  /** The event's bytes as forwarded, for a client whose stream is framed otherwise than the
   * upstream's SSE (Gemini's JSON array) or written as the upstream writes it: instead of
   * `data` as an SSE event. */
  text?: string;
  /** The usage reported so far, when the event reported some. */
  usage?: Usage;
  /** The upstream's error event, as the gateway's error. */
  failure?: ApiError;
  /** The whole response object the event ended the answer with. */
  final?: Record<string, unknown>;
  /** The next event's sequence number, for a protocol that numbers its events. */
  sequence?: number;
  /** Whether the event ends the stream. */
  ended?: boolean;
}

/** How a style reads its stream's events. */
export interface EventReading {
  read(event: SseEvent): PassedEvent;
  /** The error for a body that ends before an event ended the stream, or `null` when the body's
   * end is the stream's. */
  unfinished(): Error | null;
  /** The bytes that close the client's stream once the upstream's ended (Gemini's `]`). */
  closing?(): string;
}

/** The SSE text of one event: its name and its data, one `data:` line per line. */
export function sseText(name: string, data: string): string {
  return `event: ${name}\ndata: ${data.replaceAll("\n", "\ndata: ")}\n\n`;
}

/** A passed-through stream's batches (see the module doc). */
export class PassedEvents implements AsyncIterableIterator<PassedBatch> {
  readonly #source: UpstreamResponse;
  readonly #reading: EventReading;
  #done = false;

  constructor(source: UpstreamResponse, reading: EventReading) {
    this.#source = source;
    this.#reading = reading;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<PassedBatch, undefined>> {
    while (!this.#done) {
      let events: SseEvent[] | null;
      try {
        events = await this.#source.readEvents();
      } catch (e) {
        this.#stop();
        throw e;
      }
      if (events === null) {
        this.#done = true;
        this.#source.close();
        const error = this.#reading.unfinished();
        if (error) throw error;
        const closing = this.#reading.closing?.() ?? "";
        if (closing === "") break;
        return { done: false, value: { bytes: encoder.encode(closing), usage: null } };
      }
      let text = "";
      const batch: PassedBatch = { bytes: EMPTY, usage: null };
      for (const event of events) {
        const passed = this.#reading.read(event);
        if (passed.text !== undefined) text += passed.text;
        else if (passed.data !== null) text += sseText(passed.name ?? event.event, passed.data);
        if (passed.usage) batch.usage = passed.usage;
        if (passed.failure) batch.failure = passed.failure;
        if (passed.final) batch.final = passed.final;
        if (passed.sequence !== undefined) batch.sequence = passed.sequence;
        if (passed.ended) {
          this.#done = true;
          this.#source.release();
          break;
        }
      }
      if (text !== "") {
        batch.bytes = encoder.encode(text);
        return { done: false, value: batch };
      }
    }
    return { done: true, value: undefined };
  }

  return(): Promise<IteratorResult<PassedBatch, undefined>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  #stop(): void {
    if (this.#done) return;
    this.#done = true;
    this.#source.close();
  }
}

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();
