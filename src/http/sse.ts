const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");

/** Encodes one SSE `data:` event carrying a JSON value. */
export function encodeEvent(value: unknown): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
}

/** Encodes one SSE `data:` event from an already serialised JSON text (one line). */
export function encodeData(text: string): Uint8Array {
  return encoder.encode(`data: ${text}\n\n`);
}

/** The final `data: [DONE]` event of a chat stream. */
export function doneEvent(): Uint8Array {
  return DONE;
}

/** The response headers of an SSE stream. */
export function sseHeaders(): Headers {
  return new Headers({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
  });
}

/** One decoded server-sent event. */
export interface SseEvent {
  /** The `event:` field; `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  id?: string;
}

/** Decodes a byte stream of server-sent events per the WHATWG algorithm: any line ending,
 * chunks that split lines, events or multi-byte characters, comments, multi-line data. */
export class SseDecoderStream extends TransformStream<Uint8Array, SseEvent> {
  constructor() {
    const decoder = new TextDecoder();
    let buffer = "";
    let data: string[] = [];
    let event = "";
    let id: string | undefined;
    let sawCr = false;

    const dispatch = (controller: TransformStreamDefaultController<SseEvent>) => {
      if (data.length > 0) {
        const out: SseEvent = { event: event || "message", data: data.join("\n") };
        if (id !== undefined) out.id = id;
        controller.enqueue(out);
      }
      data = [];
      event = "";
    };

    const line = (text: string, controller: TransformStreamDefaultController<SseEvent>) => {
      if (text === "") return dispatch(controller);
      if (text.charCodeAt(0) === 58) return; // ":" comment
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id" && !value.includes("\0")) id = value;
    };

    // `scanned`: how much of `buffer` (a partial line) has already been searched for a line end.
    let scanned = 0;
    const feed = (text: string, controller: TransformStreamDefaultController<SseEvent>) => {
      if (text === "") return;
      let start = 0;
      if (sawCr && text.charCodeAt(0) === 10) start = 1;
      sawCr = false;
      buffer += start ? text.slice(start) : text;
      let from = 0;
      for (let i = scanned; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        line(buffer.slice(from, i), controller);
        if (c === 13) {
          if (i + 1 < buffer.length) {
            if (buffer.charCodeAt(i + 1) === 10) i++;
          } else {
            sawCr = true;
          }
        }
        from = i + 1;
      }
      buffer = buffer.slice(from);
      scanned = buffer.length;
    };

    super({
      transform(chunk, controller) {
        feed(decoder.decode(chunk, { stream: true }), controller);
      },
      flush(controller) {
        feed(decoder.decode(), controller);
        if (buffer !== "") line(buffer, controller);
        buffer = "";
        dispatch(controller);
      },
    });
  }
}
