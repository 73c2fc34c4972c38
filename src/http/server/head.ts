/**
 * The head of an HTTP/1.1 request (RFC 9112 sections 2 to 7), read strictly: anything two parties could
 * read two ways (a bare LF, folded lines, whitespace before a colon, a Content-Length beside a
 * Transfer-Encoding, two different lengths) is refused rather than guessed at, so no proxy in
 * front can see another request boundary than ours.
 */

/** How the request's body is framed. */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" };

/** A parsed request head. */
export interface RequestHead {
  method: string;
  /** The request-target as sent (origin-form `/path?q` or absolute-form `http://h/path`). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /** Field lines in order, names as sent. */
  fields: [string, string][];
  /** The `Host` field's value, or `null` when none was sent. */
  host: string | null;
  body: BodyFraming;
  /** Whether the connection may carry another request after this one. */
  keepAlive: boolean;
  /** `Expect: 100-continue`. */
  expectContinue: boolean;
}

/** A head that cannot be served: the status to answer with and why. */
export class HeadError extends Error {
  constructor(readonly status: 400 | 431 | 501 | 505, message: string) {
    super(message);
    this.name = "HeadError";
  }
}

/** At most this many field lines (more is a 431). */
export const MAX_FIELDS = 128;

const latin1 = new TextDecoder("latin1");
/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A field value: visible characters, spaces, tabs and obs-text; no other control. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const TARGET = /^[\x21-\x7e\x80-\xff]+$/;
const DIGITS = /^\d{1,15}$/;

/** The end of the head in `bytes[from, to)`: the index just past its blank line, or -1. A blank
 * line of a bare LF also ends it (for {@link parseHead} to refuse, instead of waiting for more). */
export function headEnd(bytes: Uint8Array, from: number, to: number): number {
  const view = bytes.subarray(0, to);
  for (let at = view.indexOf(10, from); at !== -1; at = view.indexOf(10, at + 1)) {
    if (view[at + 1] === 10) return at + 2;
    if (view[at + 1] === 13 && view[at + 2] === 10) return at + 3;
  }
  return -1;
}

/** Parses the head in `bytes` (the request line through the blank line). */
export function parseHead(bytes: Uint8Array): RequestHead {
  const text = latin1.decode(bytes);
  if (!text.endsWith("\r\n\r\n")) throw new HeadError(400, "lines must end with CRLF");
  const lines = text.slice(0, -4).split("\r\n");
  const requestLine = lines[0]!;
  const parts = requestLine.split(" ");
  if (parts.length !== 3) throw new HeadError(400, "malformed request line");
  const [method, target, version] = parts as [string, string, string];
  if (!TOKEN.test(method)) throw new HeadError(400, "malformed method");
  if (!TARGET.test(target)) throw new HeadError(400, "malformed request-target");
  if (target[0] !== "/" && !/^https?:\/\//i.test(target)) {
    throw new HeadError(400, "the request-target must be a path or an absolute http URL");
  }
  let minor: 0 | 1;
  if (version === "HTTP/1.1") minor = 1;
  else if (version === "HTTP/1.0") minor = 0;
  else if (/^HTTP\/\d\.\d$/.test(version)) throw new HeadError(505, "HTTP version not supported");
  else throw new HeadError(400, "malformed HTTP version");
  if (lines.length - 1 > MAX_FIELDS) throw new HeadError(431, "too many header fields");

  const fields: [string, string][] = [];
  let host: string | null = null;
  let length: string | null = null;
  let chunked = false;
  let transferEncoding = false;
  let close = minor === 0;
  let expectContinue = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new HeadError(400, "malformed header field");
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new HeadError(400, "malformed header field name");
    const value = line.slice(colon + 1).trim();
    if (!FIELD_VALUE.test(value) || value.includes("\r")) {
      throw new HeadError(400, `malformed value of header ${name}`);
    }
    fields.push([name, value]);
    switch (name.toLowerCase()) {
      case "host":
        if (host !== null) throw new HeadError(400, "more than one Host header");
        host = value;
        break;
      case "content-length":
        for (const item of value.split(",")) {
          const n = item.trim();
          if (!DIGITS.test(n)) throw new HeadError(400, "malformed Content-Length");
          if (length !== null && Number(length) !== Number(n)) {
            throw new HeadError(400, "conflicting Content-Length headers");
          }
          length = n;
        }
        break;
      case "transfer-encoding": {
        transferEncoding = true;
        const codings = value.toLowerCase().split(",").map((c) => c.trim());
        if (chunked || codings.some((c, j) => c !== "chunked" || j !== codings.length - 1)) {
          throw new HeadError(501, `Transfer-Encoding ${value} is not supported`);
        }
        chunked = true;
        break;
      }
      case "connection":
        for (const option of value.toLowerCase().split(",")) {
          const token = option.trim();
          if (token === "close") close = true;
          else if (token === "keep-alive" && minor === 0) close = false;
        }
        break;
      case "expect":
        if (value.toLowerCase() === "100-continue") expectContinue = true;
        break;
    }
  }
  if (transferEncoding && length !== null) {
    throw new HeadError(400, "both Content-Length and Transfer-Encoding");
  }
  if (transferEncoding && minor === 0) {
    throw new HeadError(400, "Transfer-Encoding in an HTTP/1.0 request");
  }
  const body: BodyFraming = chunked
    ? { kind: "chunked" }
    : length !== null && Number(length) > 0
    ? { kind: "length", length: Number(length) }
    : { kind: "none" };
  return {
    method,
    target,
    minor,
    fields,
    host,
    body,
    keepAlive: !close,
    expectContinue: expectContinue && body.kind !== "none" && minor === 1,
  };
}
