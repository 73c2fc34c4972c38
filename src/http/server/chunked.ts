/**
 * The chunked transfer coding of a request body (RFC 9112 §7.1), decoded as bytes arrive, in
 * whatever pieces the network cuts them. Extensions are skipped within a bound and trailer
 * fields are read past and dropped; anything malformed is an error, never a guess.
 */

/** A chunked body that cannot be read. */
export class ChunkedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChunkedError";
  }
}

/** The longest chunk-size line (digits and extensions) and trailer section read past. */
const MAX_LINE = 4096;
const MAX_TRAILERS = 16 * 1024;

const enum State {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerLine,
  TrailerLf,
  EndLf,
  Done,
}

/** Decodes one chunked body. */
export class ChunkedDecoder {
  #state = State.Size;
  #size = 0;
  #digits = 0;
  #line = 0;
  #trailers = 0;
  #remaining = 0;

  /** Whether the last chunk and the trailer section have been read. */
  get done(): boolean {
    return this.#state === State.Done;
  }

  /**
   * Decodes `bytes`, calling `onData` with each piece of body data (views of `bytes`, not
   * copies). Returns how many bytes it used: all of them, or fewer once the body ended (the rest
   * belongs to the next request).
   */
  decode(bytes: Uint8Array, onData: (data: Uint8Array) => void): number {
    let at = 0;
    const end = bytes.length;
    while (at < end && this.#state !== State.Done) {
      const byte = bytes[at]!;
      switch (this.#state) {
        case State.Size: {
          const digit = hexValue(byte);
          if (digit >= 0) {
            if (++this.#digits > 15) throw new ChunkedError("chunk size too large");
            this.#size = this.#size * 16 + digit;
          } else if (this.#digits === 0) {
            throw new ChunkedError("malformed chunk size");
          } else if (byte === 13) {
            this.#state = State.SizeLf;
          } else if (byte === 59 || byte === 32 || byte === 9) {
            this.#state = State.Extension;
          } else {
            throw new ChunkedError("malformed chunk size");
          }
          at++;
          break;
        }
        case State.Extension:
          if (byte === 13) this.#state = State.SizeLf;
          else if (byte === 10 || (byte < 32 && byte !== 9) || byte === 127) {
            throw new ChunkedError("malformed chunk extension");
          } else if (++this.#line > MAX_LINE) throw new ChunkedError("chunk extension too long");
          at++;
          break;
        case State.SizeLf:
          if (byte !== 10) throw new ChunkedError("chunk size line without LF");
          at++;
          this.#line = 0;
          this.#digits = 0;
          if (this.#size === 0) {
            this.#state = State.TrailerStart;
          } else {
            this.#remaining = this.#size;
            this.#state = State.Data;
          }
          this.#size = 0;
          break;
        case State.Data: {
          const take = Math.min(this.#remaining, end - at);
          onData(bytes.subarray(at, at + take));
          at += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = State.DataCr;
          break;
        }
        case State.DataCr:
          if (byte !== 13) throw new ChunkedError("chunk data longer than its size");
          this.#state = State.DataLf;
          at++;
          break;
        case State.DataLf:
          if (byte !== 10) throw new ChunkedError("chunk data without CRLF");
          this.#state = State.Size;
          at++;
          break;
        case State.TrailerStart:
          if (byte === 13) this.#state = State.EndLf;
          else this.#state = State.TrailerLine;
          if (byte === 10) throw new ChunkedError("bare LF in trailer section");
          at++;
          this.#trailers++;
          break;
        case State.TrailerLine:
          if (byte === 13) this.#state = State.TrailerLf;
          else if (byte === 10) throw new ChunkedError("bare LF in trailer section");
          at++;
          if (++this.#trailers > MAX_TRAILERS) throw new ChunkedError("trailer section too long");
          break;
        case State.TrailerLf:
          if (byte !== 10) throw new ChunkedError("trailer line without LF");
          this.#state = State.TrailerStart;
          at++;
          break;
        case State.EndLf:
          if (byte !== 10) throw new ChunkedError("chunked body without final CRLF");
          this.#state = State.Done;
          at++;
          break;
      }
    }
    return at;
  }
}

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 65 && byte <= 70) return byte - 55;
  if (byte >= 97 && byte <= 102) return byte - 87;
  return -1;
}
