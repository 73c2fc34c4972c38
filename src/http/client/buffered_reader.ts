/**
 * A socket's bytes behind one growable buffer: reads fill it, parsers take from it. The views
 * it hands out are valid until its next read (which may move or replace the buffer).
 */

/** Where the bytes come from (a `Deno.Conn`, or a test's scripted source). */
export interface ByteSource {
  read(p: Uint8Array): Promise<number | null>;
}

/** More bytes than a head, a line or a piece may have were buffered without completing it. */
export class LineTooLong extends Error {
  constructor(what: string, limit: number) {
    super(`The upstream sent ${what} longer than ${limit} bytes.`);
    this.name = "LineTooLong";
  }
}

const CR = 13;
const LF = 10;
/** Decodes what is known to be ASCII (one op call, where `latin1` builds the string in JS). */
const ASCII = new TextDecoder();

/** Buffered reads from a {@link ByteSource}. */
export class BufferedReader {
  readonly #source: ByteSource;
  #buf: Uint8Array;
  /** The unread bytes are `#buf[start, end)`. */
  start = 0;
  end = 0;
  /** Bytes read from the source so far. */
  received = 0;
  /** Unread bytes already searched for a line end (so a line trickling in a byte a read is
   * searched once, not once per read). */
  #scanned = 0;
  /** A read started while nobody waited for it (an idle connection watching for its close). */
  #pending: Promise<number | null> | null = null;

  constructor(source: ByteSource, bytes = 8 * 1024) {
    this.#source = source;
    this.#buf = new Uint8Array(bytes);
  }

  /** The buffer the unread bytes `[start, end)` are in. */
  get buffer(): Uint8Array {
    return this.#buf;
  }

  /** Unread bytes in the buffer. */
  get available(): number {
    return this.end - this.start;
  }

  /** Reads once more from the source into the buffer (making room first); `false` at the end
   * of the source. (A plain function over the read's promise, not an async one: a stream pays
   * for every async frame between the socket and the client, once a chunk.) */
  fill(): Promise<boolean> {
    if (this.#pending !== null) {
      const pending = this.#pending;
      this.#pending = null;
      return pending.then(this.#took);
    }
    this.#makeRoom();
    return this.#source.read(this.#buf.subarray(this.end)).then(this.#took);
  }

  /** Starts a read that nobody waits for yet; `fill` takes its result. Resolves with whether
   * it brought bytes (`false`: the source ended). */
  watch(): Promise<boolean> {
    this.#makeRoom();
    const read = this.#source.read(this.#buf.subarray(this.end));
    this.#pending = read;
    return read.then((n) => n !== null && n > 0);
  }

  readonly #took = (n: number | null): boolean => {
    if (n === null) return false;
    this.end += n;
    this.received += n;
    return true;
  };

  #makeRoom(): void {
    if (this.start === this.end) {
      this.start = this.end = 0;
    }
    if (this.end < this.#buf.length) return;
    if (this.start > 0) {
      this.#buf.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
      return;
    }
    const bigger = new Uint8Array(this.#buf.length * 2);
    bigger.set(this.#buf);
    this.#buf = bigger;
  }

  /** The index of the next CRLF (or bare LF) at or after `from`, or -1. */
  #lineEnd(from: number): number {
    const buf = this.#buf;
    for (let i = from; i < this.end; i++) if (buf[i] === LF) return i;
    return -1;
  }

  /**
   * Takes the next line (without its CRLF or LF) as text; `null` when the source ends first.
   * A line over `max` bytes throws {@link LineTooLong}.
   */
  async line(max: number, what: string): Promise<string | null> {
    for (;;) {
      const line = this.bufferedLine(max, what);
      if (line !== undefined) return line;
      if (!(await this.fill())) return null;
    }
  }

  /** Takes the next line if the buffer holds all of it (see {@link line}); `undefined` when
   * it does not (nothing is read). */
  bufferedLine(max: number, what: string): string | undefined {
    const lf = this.#lineEnd(this.start + this.#scanned);
    if (lf < 0) {
      if (this.available > max) throw new LineTooLong(what, max);
      this.#scanned = this.available;
      return undefined;
    }
    this.#scanned = 0;
    const stop = lf > this.start && this.#buf[lf - 1] === CR ? lf - 1 : lf;
    if (stop - this.start > max) throw new LineTooLong(what, max);
    const text = latin1(this.#buf, this.start, stop);
    this.start = lf + 1;
    return text;
  }

  /**
   * Takes the head that ends at the next empty line, as text, if the buffer holds all of it;
   * `undefined` when it does not (nothing is read). A head over `max` bytes throws
   * {@link LineTooLong}.
   */
  bufferedHead(max: number, what: string): string | undefined {
    const buf = this.#buf;
    for (let at = this.start + this.#scanned; at < this.end; at++) {
      if (buf[at] !== LF) continue;
      // The empty line after this one: LF, or CR LF.
      let next = at + 1;
      if (next < this.end && buf[next] === CR) next++;
      if (next >= this.end) break;
      if (buf[next] !== LF) continue;
      if (at - this.start > max) throw new LineTooLong(what, max);
      const text = isAscii(buf, this.start, at)
        ? ASCII.decode(buf.subarray(this.start, at))
        : latin1(buf, this.start, at);
      this.start = next + 1;
      this.#scanned = 0;
      return text;
    }
    if (this.available > max) throw new LineTooLong(what, max);
    // The next search starts at the last line end: the empty line may follow it.
    // (A negative start would make lastIndexOf search from the buffer's end.)
    const lastLf = this.end > this.start ? buf.lastIndexOf(LF, this.end - 1) : -1;
    this.#scanned = lastLf >= this.start ? lastLf - this.start : 0;
    return undefined;
  }

  /** Marks the unread bytes up to `index` (in {@link buffer}) as taken, by a caller that parsed
   * them itself. */
  skipTo(index: number): void {
    this.start = index;
    this.#scanned = 0;
  }

  /** Takes up to `n` of the bytes already buffered (perhaps none; nothing is read). */
  buffered(n: number): Uint8Array {
    this.#scanned = 0;
    const take = Math.min(n, this.end - this.start);
    const view = this.#buf.subarray(this.start, this.start + take);
    this.start += take;
    return view;
  }

  /** Takes up to `n` buffered bytes (at least one: reads when none is buffered); `null` when
   * the source ends first. The view is valid until the next read. */
  async some(n: number): Promise<Uint8Array | null> {
    if (this.start === this.end && !(await this.fill())) return null;
    return this.buffered(n);
  }

  /** Fills `target` completely: first from the buffer, then straight from the source.
   * `false` when the source ends first. */
  async exactly(target: Uint8Array): Promise<boolean> {
    const buffered = Math.min(target.length, this.available);
    this.#scanned = 0;
    target.set(this.#buf.subarray(this.start, this.start + buffered));
    this.start += buffered;
    let filled = buffered;
    while (filled < target.length) {
      if (this.#pending !== null) {
        // Only an idle watch leaves a read pending, and a request always reads its head first.
        throw new Error("BufferedReader: a read is already pending");
      }
      const n = await this.#source.read(target.subarray(filled));
      if (n === null) return false;
      filled += n;
      this.received += n;
    }
    return true;
  }
}

function isAscii(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! > 0x7f) return false;
  return true;
}

/** Bytes as ISO-8859-1 text (what HTTP/1.1 heads are, for our purposes): one character per
 * byte, no decoder state. */
function latin1(buf: Uint8Array, start: number, end: number): string {
  let text = "";
  // String.fromCharCode over a subarray view: one call per 4 KiB keeps the argument list short.
  for (let i = start; i < end; i += 4096) {
    text += String.fromCharCode.apply(
      null,
      buf.subarray(i, Math.min(end, i + 4096)) as unknown as number[],
    );
  }
  return text;
}
