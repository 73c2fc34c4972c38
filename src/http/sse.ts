const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");

/** Encodes one SSE `data:` event carrying a JSON value. */
export function encodeEvent(value: unknown): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
}

/** Encodes SSE `data:` events carrying JSON values, all in one piece of bytes. */
export function encodeEvents(values: readonly unknown[]): Uint8Array {
  let text = "";
  for (const value of values) text += `data: ${JSON.stringify(value)}\n\n`;
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

const SSE_HEADERS = {
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

/**
 * Decodes server-sent events per the WHATWG algorithm, synchronously: feed it the bytes of
 * each network read and take the events they completed. Handles any line ending, reads that
 * split lines, events or multi-byte characters, comments, and multi-line data.
 */
export class SseDecoder {
  readonly #text = new TextDecoder();
  /** The start of a line whose end has not arrived yet. */
  #partial = "";
  #data: string[] = [];
  #event = "";
  #id: string | undefined;
  /** The last read ended with a CR, so an LF starting the next one belongs to it. */
  #sawCr = false;

  /** The events completed by one read's bytes (possibly none). */
  decode(bytes: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    this.#feed(this.#text.decode(bytes, { stream: true }), out);
    return out;
  }

  /** The end of the stream: the events still pending (an unterminated last one). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    this.#feed(this.#text.decode(), out);
    if (this.#partial !== "") this.#line(this.#partial, out);
    this.#partial = "";
    this.#dispatch(out);
    return out;
  }

  #feed(text: string, out: SseEvent[]): void {
    if (text === "") return;
    let from = 0;
    if (this.#sawCr && text.charCodeAt(0) === 10) from = 1;
    this.#sawCr = false;
    if (text.indexOf("\r", from) < 0) {
      // The common case, LF line ends only: let indexOf find them.
      for (let end = text.indexOf("\n", from); end >= 0; end = text.indexOf("\n", from)) {
        this.#line(this.#take(text, from, end), out);
        from = end + 1;
      }
    } else {
      for (let i = from; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        this.#line(this.#take(text, from, i), out);
        if (c === 13) {
          if (i + 1 < text.length) {
            if (text.charCodeAt(i + 1) === 10) i++;
          } else {
            this.#sawCr = true;
          }
        }
        from = i + 1;
      }
    }
    this.#partial += from === 0 ? text : text.slice(from);
  }

  /** The line ending at `end`, with the partial line left by earlier reads. */
  #take(text: string, from: number, end: number): string {
    const line = text.slice(from, end);
    if (this.#partial === "") return line;
    const whole = this.#partial + line;
    this.#partial = "";
    return whole;
  }

  #line(text: string, out: SseEvent[]): void {
    if (text === "") return this.#dispatch(out);
    if (text.charCodeAt(0) === 58) return; // ":" comment
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#id = value;
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#data.length > 0) {
      const data = this.#data.length === 1 ? this.#data[0]! : this.#data.join("\n");
      const event: SseEvent = { event: this.#event || "message", data };
      if (this.#id !== undefined) event.id = this.#id;
      out.push(event);
      this.#data = [];
    }
    this.#event = "";
  }
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
