/**
 * Readers of an HTTP/1.1 response body over a connection's buffered bytes, one per framing
 * (RFC 9112 §6–7): a known length, chunked, or until the connection closes.
 */
import type { BufferedReader } from "./buffered_reader.ts";
import { type BodyFraming, HttpProtocolError } from "./response_head.ts";

/** The pieces of a body as they arrive. */
export interface BodyReader {
  /** The body's next bytes if the buffer holds some (valid until the reader's next read),
   * `null` at the body's end, or `undefined` when more must be read first. Reads nothing. */
  take(): Uint8Array | null | undefined;
  /** Tells it the source ended: the end of a body read until close, else a {@link BodyCut}. */
  sourceEnded(): void;
  /** The body's next bytes (valid until the next call), or `null` at its end, reading as
   * needed. */
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

/** What every body does with its buffered reader: `next` is `take`, reading when needed. */
abstract class BufferedBody implements BodyReader {
  protected readonly reader: BufferedReader;

  constructor(reader: BufferedReader) {
    this.reader = reader;
  }

  abstract take(): Uint8Array | null | undefined;
  abstract sourceEnded(): void;
  abstract readonly done: boolean;

  async next(): Promise<Uint8Array | null> {
    for (;;) {
      const piece = this.take();
      if (piece !== undefined) return piece;
      if (!(await this.reader.fill())) this.sourceEnded();
    }
  }
}

/** A body of a declared length. */
export class LengthBody extends BufferedBody {
  #left: number;

  constructor(reader: BufferedReader, bytes: number) {
    super(reader);
    this.#left = bytes;
  }

  get done(): boolean {
    return this.#left === 0;
  }

  /** Bytes of the body not yet read. */
  get left(): number {
    return this.#left;
  }

  take(): Uint8Array | null | undefined {
    if (this.#left === 0) return null;
    const piece = this.reader.buffered(this.#left);
    if (piece.length === 0) return undefined;
    this.#left -= piece.length;
    return piece;
  }

  sourceEnded(): void {
    if (this.#left > 0) throw new BodyCut();
  }

  /** The rest of the body in one new array, read straight into it. */
  async rest(): Promise<Uint8Array> {
    const out = new Uint8Array(this.#left);
    if (!(await this.reader.exactly(out))) throw new BodyCut();
    this.#left = 0;
    return out;
  }
}

/** A body read until the server closes the connection. */
class CloseBody extends BufferedBody {
  done = false;

  take(): Uint8Array | null | undefined {
    if (this.done) return null;
    const piece = this.reader.buffered(Infinity);
    return piece.length === 0 ? undefined : piece;
  }

  sourceEnded(): void {
    this.done = true;
  }
}

/** Where a chunked body's reader is. */
const enum Chunked {
  /** At a chunk-size line. */
  Size,
  /** In a chunk's data. */
  Data,
  /** At the CRLF after a chunk's data. */
  Crlf,
  /** In the trailers, after the last chunk. */
  Trailers,
  Done,
}

/**
 * A chunked body. `take` returns the data of every chunk whose framing is already buffered as
 * one piece, so that a burst of chunks in one network read stays one piece, as it would
 * through fetch.
 */
export class ChunkedBody extends BufferedBody {
  #state = Chunked.Size;
  /** Data bytes left in the current chunk. */
  #left = 0;
  #trailers = 0;

  get done(): boolean {
    return this.#state === Chunked.Done;
  }

  take(): Uint8Array | null | undefined {
    const reader = this.reader;
    // Views of the buffer: nothing is read until this returns, so every one stays valid.
    let first: Uint8Array | null = null;
    let more: Uint8Array[] | null = null;
    for (;;) {
      if (this.#state === Chunked.Data) {
        const piece = reader.buffered(this.#left);
        if (piece.length === 0) break;
        this.#left -= piece.length;
        if (first === null) first = piece;
        else (more ??= [first]).push(piece);
        if (this.#left > 0) break;
        this.#state = Chunked.Crlf;
        continue;
      }
      if (this.#state === Chunked.Done) {
        if (first === null) return null;
        break;
      }
      const line = reader.bufferedLine(
        MAX_LINE,
        this.#state === Chunked.Trailers ? "a trailer line" : "a chunk size line",
      );
      if (line === undefined) break;
      if (this.#state === Chunked.Crlf) {
        if (line !== "") throw new HttpProtocolError("The upstream sent a malformed chunk.");
        this.#state = Chunked.Size;
      } else if (this.#state === Chunked.Size) {
        this.#left = chunkSize(line);
        this.#state = this.#left === 0 ? Chunked.Trailers : Chunked.Data;
      } else if (line === "") {
        this.#state = Chunked.Done;
      } else if (++this.#trailers > MAX_TRAILERS) {
        throw new HttpProtocolError("The upstream sent too many trailers.");
      }
    }
    if (more !== null) return concat(more);
    return first ?? undefined;
  }

  sourceEnded(): void {
    throw new BodyCut();
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
