/**
 * Reads a byte stream read after read into one reused buffer where the stream allows it (a
 * byte stream, as Deno's fetch bodies are). A default reader of a fetch body allocates a
 * fresh 64 KiB buffer for every read, which a thousand slow streams turn into hundreds of
 * megabytes waiting for the garbage collector; other streams are read as they come. The
 * buffer starts small (a slow stream's events are small) and doubles, up to `maxBytes`, each
 * time a read fills it (a fast upstream's burst then still comes in few reads).
 */
import { concatBytes } from "./bytes.ts";
export class ByteReader {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array> | null;
  readonly #maxBytes: number;
  #buffer: ArrayBuffer;

  constructor(stream: ReadableStream<Uint8Array>, bufferBytes = 8 * 1024, maxBytes = 64 * 1024) {
    this.#buffer = new ArrayBuffer(bufferBytes);
    this.#maxBytes = Math.max(bufferBytes, maxBytes);
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = stream.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream.
    }
    this.#byob = byob;
    this.#reader = byob === null ? stream.getReader() : null;
  }

  /** The next bytes, or `null` at the end. The view is only valid until the next read. */
  async read(): Promise<Uint8Array | null> {
    if (this.#byob === null) {
      for (;;) {
        const next = await this.#reader!.read();
        if (next.done) return null;
        if (next.value.byteLength > 0) return next.value;
      }
    }
    for (;;) {
      const next = await this.#byob.read(new Uint8Array(this.#buffer));
      if (next.done) return null;
      const view = next.value;
      const buffer = view.buffer as ArrayBuffer;
      // A full buffer: there may be more waiting; read into a bigger one next time (this read's
      // bytes stay in the old one, which the caller uses before reading again).
      this.#buffer = view.byteLength === buffer.byteLength && buffer.byteLength < this.#maxBytes
        ? new ArrayBuffer(buffer.byteLength * 2)
        : buffer;
      if (view.byteLength > 0) return view;
    }
  }

  /** Stops reading; the stream's source is cancelled. */
  cancel(): void {
    (this.#byob ?? this.#reader)!.cancel().catch(() => {});
  }
}

/** What {@link readText} read. */
export interface TextPrefix {
  /** The text of the bytes read (at most the limit). */
  text: string;
  /** Whether that was the whole stream; when not, the rest was cancelled unread. */
  complete: boolean;
}

/**
 * Reads a stream as UTF-8 text, at most `maxBytes` of it: a longer stream is cancelled once
 * the limit is reached, so no more than the limit (and one read) is ever held.
 */
export async function readText(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<TextPrefix> {
  if (stream === null) return { text: "", complete: true };
  // A default reader: a body read once is short-lived, and setting up a BYOB reader cost more
  // (~6% of a non-streamed request's CPU) than its reused buffer saves.
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let left = maxBytes;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const bytes = read.value;
    if (bytes.byteLength > left) {
      reader.cancel().catch(() => {});
      return { text: text + decoder.decode(bytes.subarray(0, left)), complete: false };
    }
    left -= bytes.byteLength;
    text += decoder.decode(bytes, { stream: true });
  }
  return { text: text + decoder.decode(), complete: true };
}

/** What {@link readBytes} read. */
export interface BytesPrefix {
  /** The bytes read (at most the limit). */
  bytes: Uint8Array;
  /** Whether that was the whole stream; when not, the rest was cancelled unread. */
  complete: boolean;
  /** Gives the bytes' buffer back to the client for another answer, once nothing reads them
   * (where it was lent; never calling it is safe). */
  release?: () => void;
}

/** Reads a stream's bytes, at most `maxBytes` of them (see {@link readText}). */
export async function readBytes(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<BytesPrefix> {
  if (stream === null) return { bytes: new Uint8Array(0), complete: true };
  const reader = stream.getReader();
  const pieces: Uint8Array[] = [];
  let left = maxBytes;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const bytes = read.value;
    if (bytes.byteLength > left) {
      reader.cancel().catch(() => {});
      pieces.push(bytes.subarray(0, left));
      return { bytes: concatBytes(pieces), complete: false };
    }
    left -= bytes.byteLength;
    pieces.push(bytes);
  }
  return { bytes: concatBytes(pieces), complete: true };
}
