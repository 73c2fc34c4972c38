/**
 * Buffers lent for bodies read whole and let go once used (an upstream answer decoded to text,
 * or passed on to the client as it was written). A new ArrayBuffer per body counts as external
 * memory, and its pressure makes V8 collect the old generation: a 100 x 1536 embeddings answer
 * (819 KB) at 600 a second ran a full collection every 150 ms.
 */

/** Bodies smaller than this are not worth keeping. */
const MIN_BYTES = 16 * 1024;

/** Lends buffers of power-of-two sizes and keeps those given back, up to a total. */
export class BytePool {
  /** Buffers given back, by size. */
  readonly #free = new Map<number, ArrayBuffer[]>();
  /** The buffers out on loan (a buffer given back twice, or one never lent, is not kept). */
  readonly #lent = new WeakSet<ArrayBuffer>();
  readonly #maxKept: number;
  #kept = 0;

  /** Keeps at most `maxKept` bytes of buffers between loans. */
  constructor(maxKept = 32 * 1024 * 1024) {
    this.#maxKept = maxKept;
  }

  /** Bytes kept for the next loans. */
  get kept(): number {
    return this.#kept;
  }

  /** `length` bytes whose contents are undefined: a view of a kept buffer when one fits. */
  take(length: number): Uint8Array<ArrayBuffer> {
    if (length < MIN_BYTES) return new Uint8Array(length);
    const size = 2 ** Math.ceil(Math.log2(length));
    let buffer = this.#free.get(size)?.pop();
    if (buffer === undefined) buffer = new ArrayBuffer(size);
    else this.#kept -= size;
    this.#lent.add(buffer);
    return new Uint8Array(buffer, 0, length);
  }

  /** Lets go of every buffer kept (the process went quiet: the next busy spell can grow them
   * again). */
  trim(): void {
    this.#free.clear();
    this.#kept = 0;
  }

  /** Takes back a view {@link take} returned, once nothing reads it any more. */
  give(bytes: Uint8Array): void {
    const buffer = bytes.buffer as ArrayBuffer;
    if (!this.#lent.delete(buffer)) return;
    const size = buffer.byteLength;
    if (this.#kept + size > this.#maxKept) return;
    this.#kept += size;
    const free = this.#free.get(size);
    if (free === undefined) this.#free.set(size, [buffer]);
    else free.push(buffer);
  }
}
