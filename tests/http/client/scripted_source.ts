/**
 * A {@link ByteSource} that hands out scripted bytes, a chosen number per read, for parsers
 * tested at every split of their input.
 */
import type { ByteSource } from "../../../src/http/client/buffered_reader.ts";

const encoder = new TextEncoder();

/** How many bytes read number `i` (from 0) may hand out at most. */
export type ReadSizes = number | ((i: number) => number);

/** Reads of 1, 2, 3… bytes. */
export const growing: ReadSizes = (i) => i + 1;

/** Scripted bytes handed out `sizes` at a time; `null` once they are all read. */
export class ScriptedSource implements ByteSource {
  readonly bytes: Uint8Array;
  readonly #sizes: ReadSizes;
  #at = 0;
  /** Reads asked for so far (including the one that returned `null`). */
  reads = 0;

  constructor(data: string | Uint8Array, sizes: ReadSizes = Infinity) {
    this.bytes = typeof data === "string" ? encoder.encode(data) : data;
    this.#sizes = sizes;
  }

  /** Bytes not handed out yet. */
  get left(): number {
    return this.bytes.length - this.#at;
  }

  read(p: Uint8Array): Promise<number | null> {
    const i = this.reads++;
    if (this.#at >= this.bytes.length) return Promise.resolve(null);
    const size = typeof this.#sizes === "number" ? this.#sizes : this.#sizes(i);
    const n = Math.min(p.length, size, this.bytes.length - this.#at);
    p.set(this.bytes.subarray(this.#at, this.#at + n));
    this.#at += n;
    return Promise.resolve(n);
  }
}

/** Bytes as text, one character per byte (as the reader decodes heads). */
export function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}
