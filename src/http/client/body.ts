/**
 * Readers of an HTTP/1.1 response body over a connection's buffered bytes, one per framing
 * (RFC 9112 §6-7): a known length, chunked, or until the connection closes.
 */
import { concatBytes } from "../bytes.ts";
import { type BufferedReader, LineTooLong } from "./buffered_reader.ts";
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

  /** The rest of the body read straight into `out` ({@link left} bytes long). */
  async rest(out = new Uint8Array(this.#left)): Promise<Uint8Array> {
    if (out.length !== this.#left) throw new RangeError("rest: the array is not the body's length");
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
      // The framing of every chunk is read from the bytes (no string a chunk).
      if (this.#state === Chunked.Crlf) {
        if (!takeLineEnd(reader)) break;
        this.#state = Chunked.Size;
        continue;
      }
      if (this.#state === Chunked.Size) {
        const size = takeChunkSize(reader);
        if (size === undefined) break;
        this.#left = size;
        this.#state = size === 0 ? Chunked.Trailers : Chunked.Data;
        continue;
      }
      const line = reader.bufferedLine(MAX_LINE, "a trailer line");
      if (line === undefined) break;
      if (line === "") {
        this.#state = Chunked.Done;
      } else if (++this.#trailers > MAX_TRAILERS) {
        throw new HttpProtocolError("The upstream sent too many trailers.");
      }
    }
    if (more !== null) return concatBytes(more);
    return first ?? undefined;
  }

  sourceEnded(): void {
    throw new BodyCut();
  }
}

const CR = 13;
const LF = 10;

/** Takes the CRLF (or LF) after a chunk's data: `true` once taken, `false` until it has all
 * arrived. Anything else there is a malformed chunk. */
function takeLineEnd(reader: BufferedReader): boolean {
  const buf = reader.buffer;
  let at = reader.start;
  if (at === reader.end) return false;
  if (buf[at] === CR) {
    if (at + 1 === reader.end) return false;
    at++;
  }
  if (buf[at] !== LF) throw new HttpProtocolError("The upstream sent a malformed chunk.");
  reader.skipTo(at + 1);
  return true;
}

/** Takes a chunk-size line (`1a2b`, `1a2b;ext=value`, blanks around the size allowed) and
 * gives its size, or `undefined` until the whole line has arrived. */
function takeChunkSize(reader: BufferedReader): number | undefined {
  const buf = reader.buffer;
  const { start, end } = reader;
  let at = start;
  while (at < end && isBlank(buf[at]!)) at++;
  let size = 0;
  let digits = 0;
  /** Digits after the leading zeros (which the line's length bounds). */
  let significant = 0;
  for (; at < end; at++) {
    const value = hexValue(buf[at]!);
    if (value < 0) break;
    digits++;
    if ((size > 0 || value > 0) && ++significant > 12) throw malformedSize();
    size = size * 16 + value;
  }
  while (at < end && isBlank(buf[at]!)) at++;
  if (at === end) {
    if (end - start > MAX_LINE) throw sizeLineTooLong();
    return undefined;
  }
  if (digits === 0) throw malformedSize();
  const byte = buf[at]!;
  let lineEnd = at;
  if (byte === SEMICOLON) {
    // Extensions are skipped to the line's end.
    lineEnd = buf.subarray(at, end).indexOf(LF);
    if (lineEnd < 0) {
      if (end - start > MAX_LINE) throw sizeLineTooLong();
      return undefined;
    }
    lineEnd += at;
  } else if (byte === CR) {
    if (at + 1 === end) return undefined;
    if (buf[at + 1] !== LF) throw malformedSize();
    lineEnd = at + 1;
  } else if (byte !== LF) {
    throw malformedSize();
  }
  if (lineEnd - start > MAX_LINE) throw sizeLineTooLong();
  reader.skipTo(lineEnd + 1);
  return size;
}

const SEMICOLON = 59;

function isBlank(byte: number): boolean {
  return byte === 32 || byte === 9;
}

/** A hex digit's value, or -1. */
function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  if (byte >= 65 && byte <= 70) return byte - 55;
  return -1;
}

function sizeLineTooLong(): LineTooLong {
  return new LineTooLong("a chunk size line", MAX_LINE);
}

function malformedSize(): HttpProtocolError {
  return new HttpProtocolError("The upstream sent a malformed chunk size.");
}
