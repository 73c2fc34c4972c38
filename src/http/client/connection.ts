/**
 * One HTTP/1.1 connection to an upstream: writes a request, reads the response head, and
 * keeps the buffered bytes for the body's reader.
 */
import { BufferedReader } from "./buffered_reader.ts";
import {
  HttpProtocolError,
  parseFieldLine,
  parseStatusLine,
  type ResponseHead,
} from "./response_head.ts";

/** Bytes a response head may have (status line and fields). */
const MAX_HEAD_BYTES = 64 * 1024;
/** Header fields a response head may have. */
const MAX_FIELDS = 256;
/** Informational (1xx) heads skipped before the final one. */
const MAX_INTERIM = 8;

/** A socket carrying one request at a time. */
export class Http1Connection {
  readonly reader: BufferedReader;
  readonly #conn: Deno.Conn;
  #closed = false;
  /** Requests sent on it so far. */
  requests = 0;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.reader = new BufferedReader(conn);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Lets the socket keep the process alive (while it carries a request), or not (idle). */
  keepAlive(ref: boolean): void {
    if (ref) this.#conn.ref();
    else this.#conn.unref();
  }

  /** Writes all of `bytes`. */
  async write(bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.length) written += await this.#conn.write(bytes.subarray(written));
  }

  /**
   * Reads the final response head (informational 1xx heads are skipped); `null` when the
   * connection ended before any byte of it (a kept-alive connection the server had closed).
   */
  async readHead(): Promise<ResponseHead | null> {
    for (let interim = 0;; interim++) {
      // The whole head is found in the buffer and decoded at once (a line at a time cost an
      // async call and a string per line: ~4 KB of garbage per answer).
      let text = this.reader.bufferedHead(MAX_HEAD_BYTES, "a response head");
      while (text === undefined) {
        if (!(await this.reader.fill())) {
          if (interim === 0 && this.reader.available === 0) return null;
          throw new HttpProtocolError("The upstream closed the connection inside a response head.");
        }
        text = this.reader.bufferedHead(MAX_HEAD_BYTES, "a response head");
      }
      const lines = headLines(text);
      const status = parseStatusLine(lines[0]!);
      const head: ResponseHead = {
        minor: status.minor,
        status: status.status,
        statusText: status.statusText,
        fields: [],
      };
      if (lines.length - 1 > MAX_FIELDS) {
        throw new HttpProtocolError(`The upstream sent more than ${MAX_FIELDS} header fields.`);
      }
      for (let i = 1; i < lines.length; i++) head.fields.push(parseFieldLine(lines[i]!));
      if (head.status === 101) {
        throw new HttpProtocolError(
          "The upstream switched protocols, which a model call never asks.",
        );
      }
      if (head.status >= 200) return head;
      if (interim >= MAX_INTERIM) {
        throw new HttpProtocolError("The upstream sent too many informational responses.");
      }
    }
  }

  /** Closes the socket (a pending read or write then fails). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by the runtime.
    }
  }
}

/** A head's lines without their line ends: split at CRLF when every line ends so (as servers
 * write them; no slice per line), else at LF with each CR dropped. */
function headLines(head: string): string[] {
  // The head ends before the last line's LF: its CR, if any, is still there.
  const text = head.endsWith("\r") ? head.slice(0, -1) : head;
  const lines = text.split("\r\n");
  for (const line of lines) {
    if (line.includes("\n")) return text.split("\n").map(withoutCr);
  }
  return lines;
}

/** A line without the CR of its CRLF. */
function withoutCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
