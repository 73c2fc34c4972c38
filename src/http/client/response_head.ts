/**
 * An HTTP/1.1 response head (RFC 9112 §4-6): the status line, the header fields, and how the
 * body that follows is framed.
 */

/** The upstream broke HTTP/1.1: the answer cannot be read (the connection is not reused). */
export class HttpProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HttpProtocolError";
  }
}

/** A parsed status line and its header fields (names lower-cased, in the order sent). */
export interface ResponseHead {
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: number;
  status: number;
  statusText: string;
  fields: [name: string, value: string][];
}

/** How the body after a head is delimited. */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; bytes: number }
  | { kind: "chunked" }
  /** Until the server closes the connection (no length given). */
  | { kind: "close" };

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** A field name is a token (RFC 9110 §5.1). */
export const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A field value holds no CR (a bare CR, RFC 9112 §2.2) and no NUL (RFC 9110 §5.5): `Headers`
 * would refuse it later, when the answer's headers are first read. */
const BAD_VALUE = /[\r\0]/;

/** Parses `HTTP/1.1 200 OK`. */
export function parseStatusLine(line: string): Omit<ResponseHead, "fields"> {
  const m = STATUS_LINE.exec(line);
  if (!m) throw new HttpProtocolError(`The upstream sent a malformed status line.`);
  return { minor: Number(m[1]), status: Number(m[2]), statusText: m[3] ?? "" };
}

/** Parses one `name: value` field line (surrounding whitespace of the value trimmed). */
export function parseFieldLine(line: string): [string, string] {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon) : "";
  // A line starting with whitespace is an obsolete folded continuation (RFC 9112 §5.2): refused.
  if (!FIELD_NAME.test(name)) throw new HttpProtocolError(`The upstream sent a malformed header.`);
  // The value without its surrounding whitespace, in one slice.
  let start = colon + 1;
  let end = line.length;
  while (start < end && isSpace(line.charCodeAt(start))) start++;
  while (end > start && isSpace(line.charCodeAt(end - 1))) end--;
  const value = line.slice(start, end);
  if (BAD_VALUE.test(value)) throw new HttpProtocolError(`The upstream sent a malformed header.`);
  return [name.toLowerCase(), value];
}

/** Whitespace around a field value (what `trim` removes, as far as a head holds it). */
function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 11 || code === 12;
}

/** The first value of field `name` (lower-case), or `null`. */
export function field(head: ResponseHead, name: string): string | null {
  for (const [n, v] of head.fields) if (n === name) return v;
  return null;
}

/** All values of field `name` (lower-case), comma-joined, or `null`. */
export function joined(head: ResponseHead, name: string): string | null {
  let out: string | null = null;
  for (const [n, v] of head.fields) if (n === name) out = out === null ? v : `${out}, ${v}`;
  return out;
}

/** How the body of a response to `method` is framed (RFC 9112 §6.3). */
export function bodyFraming(head: ResponseHead, method: string): BodyFraming {
  const { status } = head;
  if (method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200)) {
    return { kind: "none" };
  }
  const coding = joined(head, "transfer-encoding");
  if (coding !== null) {
    const codings = coding.toLowerCase().split(",").map((c) => c.trim());
    return codings[codings.length - 1] === "chunked" ? { kind: "chunked" } : { kind: "close" };
  }
  const length = joined(head, "content-length");
  if (length === null) return { kind: "close" };
  // Repeated identical values are allowed (RFC 9110 §8.6); anything else is an attack.
  const values = new Set(length.split(",").map((v) => v.trim()));
  const [only] = values;
  if (values.size !== 1 || only === undefined || !/^\d{1,15}$/.test(only)) {
    throw new HttpProtocolError(`The upstream sent an invalid Content-Length.`);
  }
  return { kind: "length", bytes: Number(only) };
}

/** Whether the connection may carry another request after this response's body. */
export function keepsAlive(head: ResponseHead, framing: BodyFraming): boolean {
  if (framing.kind === "close") return false;
  if (field(head, "transfer-encoding") !== null && field(head, "content-length") !== null) {
    return false;
  }
  const connection = (joined(head, "connection") ?? "").toLowerCase();
  const options = connection.split(",").map((o) => o.trim());
  if (options.includes("close")) return false;
  return head.minor === 1 || options.includes("keep-alive");
}
