/**
 * Reads a byte stream read after read into one reused buffer where the stream allows it (a
 * byte stream, as Deno's fetch bodies are). A default reader of a fetch body allocates a
 * fresh 64 KiB buffer for every read, which a thousand slow streams turn into hundreds of
 * megabytes waiting for the garbage collector; other streams are read as they come.
 */
export class ByteReader {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array> | null;
  #buffer: ArrayBuffer;

  constructor(stream: ReadableStream<Uint8Array>, bufferBytes = 16 * 1024) {
    this.#buffer = new ArrayBuffer(bufferBytes);
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
      if (next.value) this.#buffer = next.value.buffer as ArrayBuffer;
      if (next.done) return null;
      if (next.value.byteLength > 0) return next.value;
    }
  }

  /** Stops reading; the stream's source is cancelled. */
  cancel(): void {
    (this.#byob ?? this.#reader)!.cancel().catch(() => {});
  }
}
