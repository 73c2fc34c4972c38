/**
 * Readers of an HTTP/1.1 response body over a connection's buffered bytes, one per framing
 * (RFC 9112 §6–7): a known length, chunked, or until the connection closes.
 */
import type { BufferedReader } from "./buffered_reader.ts";
import { type BodyFraming, HttpProtocolError } from "./response_head.ts";

/** The pieces of a body as they arrive. */
export interface BodyReader {
  /** The body's next bytes (valid until the next call), or `null` at its end. */
  next(): Promise<Uint8Array | null>;
  /** Whether the body was read to its end (a connection may then carry another request). */
  readonly done: boolean;
}

/** The connection ended before the body did. */
export class BodyCut extends Error {
  constructor() {
    super("The upstream closed the connection before the end of the answer.");
    this.name = "BodyCut";
  }
}

/** Bytes a chunk-size line or a trailer line may have. */
const MAX_LINE = 4096;
/** Trailer lines after the last chunk. */
const MAX_TRAILERS = 64;
const HEX = /^[0-9A-Fa-f]{1,12}$/;

/** The reader for a body framed as `framing`. */
export function bodyReader(reader: BufferedReader, framing: BodyFraming): BodyReader {
  switch (framing.kind) {
    case "none":
      return new LengthBody(reader, 0);
    case "length":
      return new LengthBody(reader, framing.bytes);
    case "chunked":
      return new ChunkedBody(reader);
    case "close":
      return new CloseBody(reader);
  }
}

/** A body of a declared length. */
export class LengthBody implements BodyReader {
  readonly #reader: BufferedReader;
  #left: number;

  constructor(reader: BufferedReader, bytes: number) {
    this.#reader = reader;
    this.#left = bytes;
  }

  get done(): boolean {
    return this.#left === 0;
  }

  /** Bytes of the body not yet read. */
  get left(): number {
    return this.#left;
  }

  async next(): Promise<Uint8Array | null> {
    if (this.#left === 0) return null;
    const piece = await this.#reader.some(this.#left);
    if (piece === null) throw new BodyCut();
    this.#left -= piece.length;
    return piece;
  }

  /** The rest of the body in one new array, read straight into it. */
  async rest(): Promise<Uint8Array> {
    const out = new Uint8Array(this.#left);
    if (!(await this.#reader.exactly(out))) throw new BodyCut();
    this.#left = 0;
    return out;
  }
}

/** A body read until the server closes the connection. */
class CloseBody implements BodyReader {
  readonly #reader: BufferedReader;
  done = false;

  constructor(reader: BufferedReader) {
    this.#reader = reader;
  }

  async next(): Promise<Uint8Array | null> {
    if (this.done) return null;
    const piece = await this.#reader.some(Infinity);
    if (piece === null) this.done = true;
    return piece;
  }
}

/**
 * A chunked body. Each call returns the data of every chunk whose framing is already buffered
 * (reading only when nothing is), so that a burst of chunks in one network read stays one
 * piece, as it would through fetch.
 */
export class ChunkedBody implements BodyReader {
  readonly #reader: BufferedReader;
  /** Data bytes left in the current chunk. */
  #left = 0;
  /** Whether the CRLF after a chunk's data is still to come. */
  #crlf = false;
  done = false;

  constructor(reader: BufferedReader) {
    this.#reader = reader;
  }

  async next(): Promise<Uint8Array | null> {
    const reader = this.#reader;
    const pieces: Uint8Array[] = [];
    while (!this.done) {
      const waiting = pieces.length === 0;
      if (this.#left === 0) {
        // A line: the CRLF after the last chunk's data, or the next chunk's size.
        const line = waiting
          ? await reader.line(MAX_LINE, "a chunk size line")
          : reader.bufferedLine(MAX_LINE, "a chunk size line");
        if (line === undefined) break;
        if (line === null) throw new BodyCut();
        if (this.#crlf) {
          if (line !== "") throw new HttpProtocolError("The upstream sent a malformed chunk.");
          this.#crlf = false;
          continue;
        }
        const size = chunkSize(line);
        if (size === 0) {
          if (!waiting) {
            // The last chunk: its trailers are read on the next call.
            this.#left = -1;
            break;
          }
          await this.#trailers();
          break;
        }
        this.#left = size;
      }
      if (this.#left < 0) {
        await this.#trailers();
        break;
      }
      const piece = waiting ? await reader.some(this.#left) : reader.buffered(this.#left);
      if (piece === null) throw new BodyCut();
      if (piece.length === 0) break;
      this.#left -= piece.length;
      if (this.#left === 0) this.#crlf = true;
      // Only the first piece may wait for a read; later ones come from the buffer as it is,
      // so every view taken stays valid until this call returns.
      pieces.push(piece);
      if (this.#left > 0) break;
    }
    if (pieces.length === 0) return null;
    if (pieces.length === 1) return pieces[0]!;
    return concat(pieces);
  }

  async #trailers(): Promise<void> {
    for (let i = 0;; i++) {
      if (i > MAX_TRAILERS) throw new HttpProtocolError("The upstream sent too many trailers.");
      const line = await this.#reader.line(MAX_LINE, "a trailer line");
      if (line === null) throw new BodyCut();
      if (line === "") break;
    }
    this.done = true;
    this.#left = 0;
  }
}

/** The size of a chunk-size line (`1a2b` or `1a2b;ext=value`). */
function chunkSize(line: string): number {
  const semicolon = line.indexOf(";");
  const hex = (semicolon >= 0 ? line.slice(0, semicolon) : line).trim();
  if (!HEX.test(hex)) throw new HttpProtocolError("The upstream sent a malformed chunk size.");
  return parseInt(hex, 16);
}

function concat(pieces: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of pieces) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of pieces) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
