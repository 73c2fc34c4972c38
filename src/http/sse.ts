const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");

/** Encodes one SSE `data:` event carrying a JSON value. */
export function encodeEvent(value: unknown): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
}

/** Encodes SSE `data:` events carrying JSON values (a string is taken as JSON already
 * serialised), all in one piece of bytes. */
export function encodeEvents(values: readonly unknown[]): Uint8Array {
  let text = "";
  for (const value of values) {
    text += `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
  }
  return encoder.encode(text);
}

/** Encodes one SSE `data:` event from an already serialised JSON text (one line). */
export function encodeData(text: string): Uint8Array {
  return encoder.encode(`data: ${text}\n\n`);
}

/** The final `data: [DONE]` event of a chat stream. */
export function doneEvent(): Uint8Array {
  return DONE;
}

/** The headers of an SSE response. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
} as const;

/** The response headers of an SSE stream. */
export function sseHeaders(): Headers {
  return new Headers(SSE_HEADERS);
}

/** A 200 SSE response streaming `body`. (Deno builds a Response with only a Content-Type
 * header on a fast path; setting the other two afterwards costs ~0.6 µs, handing all three to
 * the constructor ~2.5 µs.) */
export function sseResponse(body: ReadableStream<Uint8Array>): Response {
  const response = new Response(body, {
    status: 200,
    headers: { "content-type": SSE_HEADERS["content-type"] },
  });
  response.headers.set("cache-control", SSE_HEADERS["cache-control"]);
  response.headers.set("x-accel-buffering", SSE_HEADERS["x-accel-buffering"]);
  return response;
}

/** One decoded server-sent event. */
export interface SseEvent {
  /** The `event:` field; `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  id?: string;
}

/** An event (the bytes from one blank line to the next) longer than the decoder accepts. */
export class SseEventTooLarge extends Error {
  /** The limit, in bytes. */
  readonly limit: number;

  constructor(limit: number) {
    super(`A server-sent event is longer than ${limit} bytes.`);
    this.name = "SseEventTooLarge";
    this.limit = limit;
  }
}

/**
 * Decodes server-sent events per the WHATWG algorithm, synchronously: feed it the bytes of
 * each network read and take the events they completed. Handles any line ending, reads that
 * split lines, events or multi-byte characters, comments, and multi-line data. An event (or a
 * line, which is part of one) longer than `maxEventBytes` throws {@link SseEventTooLarge}
 * before more than that and one read is held.
 */
export class SseDecoder {
  readonly #text = new TextDecoder();
  readonly #maxEventBytes: number;
  /** The start of a line whose end has not arrived yet. */
  #partial = "";
  #data: string[] = [];
  #event = "";
  #id: string | undefined;
  /** The last read ended with a CR, so an LF starting the next one belongs to it. */
  #sawCr = false;
  /** UTF-8 bytes of the event being read: since the last blank line. */
  #eventBytes = 0;

  constructor(maxEventBytes = Infinity) {
    this.#maxEventBytes = maxEventBytes;
  }

  /** The events completed by one read's bytes (possibly none). */
  decode(bytes: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    this.#feed(this.#text.decode(bytes, { stream: true }), out, bytes.byteLength);
    return out;
  }

  /** The end of the stream: the events still pending (an unterminated last one). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    this.#feed(this.#text.decode(), out, 0);
    if (this.#partial !== "") this.#line(this.#partial, out);
    this.#partial = "";
    this.#dispatch(out);
    return out;
  }

  /** Takes the lines of `text` (decoded from `byteLength` bytes; 0 at the end). */
  #feed(text: string, out: SseEvent[], byteLength: number): void {
    let from = 0;
    /** Where the event after this text's last blank line begins, or -1. */
    let event = -1;
    // Only a read that could complete an event over the limit has its events measured (a loop
    // over their characters); any other is counted as a whole.
    const measure = this.#eventBytes + byteLength > this.#maxEventBytes;
    if (this.#sawCr && text.charCodeAt(0) === 10) from = 1;
    if (text !== "") this.#sawCr = false;
    if (text.indexOf("\r", from) < 0) {
      // The common case, LF line ends only: let indexOf find them.
      for (let end = text.indexOf("\n", from); end >= 0; end = text.indexOf("\n", from)) {
        let blank = false;
        if (this.#partial === "" && text.startsWith("data: ", from)) {
          // A whole `data: ` line (most of any stream): its value in one slice.
          this.#data.push(text.slice(from + 6, end));
        } else {
          blank = this.#line(this.#take(text, from, end), out);
        }
        from = end + 1;
        if (blank) {
          if (measure) this.#check(text, event, from);
          event = from;
        }
      }
    } else {
      for (let i = from; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        const blank = this.#line(this.#take(text, from, i), out);
        if (c === 13) {
          if (i + 1 < text.length) {
            if (text.charCodeAt(i + 1) === 10) i++;
          } else {
            this.#sawCr = true;
          }
        }
        from = i + 1;
        if (blank) {
          if (measure) this.#check(text, event, from);
          event = from;
        }
      }
    }
    this.#eventBytes = event < 0
      ? this.#eventBytes + byteLength
      : utf8Length(text, event, text.length);
    if (this.#eventBytes > this.#maxEventBytes) throw new SseEventTooLarge(this.#maxEventBytes);
    if (from < text.length) this.#partial += from === 0 ? text : text.slice(from);
  }

  /** Throws if the event that began at `start` (-1: in an earlier read) and whose blank line
   * ends at `end` is over the limit. */
  #check(text: string, start: number, end: number): void {
    const bytes = start < 0
      ? this.#eventBytes + utf8Length(text, 0, end)
      : utf8Length(text, start, end);
    if (bytes > this.#maxEventBytes) throw new SseEventTooLarge(this.#maxEventBytes);
  }

  /** The line ending at `end`, with the partial line left by earlier reads. */
  #take(text: string, from: number, end: number): string {
    const line = text.slice(from, end);
    if (this.#partial === "") return line;
    const whole = this.#partial + line;
    this.#partial = "";
    return whole;
  }

  /** Takes one line; says whether it was blank (the end of an event). */
  #line(text: string, out: SseEvent[]): boolean {
    if (text === "") {
      this.#dispatch(out);
      return true;
    }
    if (text.charCodeAt(0) === 58) return false; // ":" comment
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#id = value;
    return false;
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#data.length > 0) {
      const data = this.#data.length === 1 ? this.#data[0]! : this.#data.join("\n");
      const event: SseEvent = { event: this.#event || "message", data };
      if (this.#id !== undefined) event.id = this.#id;
      out.push(event);
      this.#data.length = 0;
    }
    this.#event = "";
  }
}

/** The UTF-8 length of `text` from `from` to `to`. */
function utf8Length(text: string, from: number, to: number): number {
  let bytes = to - from;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // 2 bytes below U+0800, 3 up to U+FFFF, 4 for a surrogate pair (2 each half).
    if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}

/** {@link SseDecoder} as a TransformStream of bytes to events. */
export class SseDecoderStream extends TransformStream<Uint8Array, SseEvent> {
  constructor() {
    const decoder = new SseDecoder();
    super({
      transform(chunk, controller) {
        for (const event of decoder.decode(chunk)) controller.enqueue(event);
      },
      flush(controller) {
        for (const event of decoder.end()) controller.enqueue(event);
      },
    });
  }
}
