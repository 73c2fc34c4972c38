/**
 * The head of an HTTP/1.1 response: status line, the handler's header fields, and the framing
 * fields the server decides (`content-length` or `transfer-encoding`, `connection`, `date`).
 */

/** How the response's body is framed on the wire. */
export type ResponseFraming =
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  /** Until the connection closes (an HTTP/1.0 client and a body of unknown length). */
  | { kind: "close-delimited" }
  /** No body and no length field (1xx, 204, 304). */
  | { kind: "none" };

/** Fields the server writes itself: the handler's own are dropped. */
const FRAMING_FIELDS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"]);

const REASONS: Record<number, string> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  422: "Unprocessable Content",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  499: "Client Closed Request",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  529: "Site Overloaded",
};

/** The reason phrase for `status` (empty for one without a registered phrase). */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "";
}

/** The `Date` field's value, worked out at most once a second. */
export class DateField {
  #second = -1;
  #value = "";

  value(now = Date.now()): string {
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#value = new Date(second * 1000).toUTCString();
    }
    return this.#value;
  }
}

/** The head's bytes, followed by `body` if given (one buffer: one write). */
export function responseHead(
  status: number,
  statusText: string,
  headers: Headers,
  framing: ResponseFraming,
  close: boolean,
  date: string,
  body?: Uint8Array,
): Uint8Array {
  let head = `HTTP/1.1 ${status} ${statusText || reasonPhrase(status)}\r\n`;
  let hasDate = false;
  // forEach, not for-of: Deno's Headers iterator cost ~11 µs more for seven fields.
  headers.forEach((value, name) => {
    if (FRAMING_FIELDS.has(name)) return;
    if (name === "date") hasDate = true;
    head += `${name}: ${value}\r\n`;
  });
  if (!hasDate) head += `date: ${date}\r\n`;
  if (framing.kind === "length") head += `content-length: ${framing.length}\r\n`;
  else if (framing.kind === "chunked") head += "transfer-encoding: chunked\r\n";
  if (close) head += "connection: close\r\n";
  head += "\r\n";
  if (body === undefined) return latin1Bytes(head);
  // deno-lint-ignore no-control-regex
  if (!/^[\x00-\x7f]*$/.test(head)) return concat(latin1Bytes(head), body);
  // Encoded straight into the buffer the body joins (a second buffer and copy cost ~1 µs).
  const out = new Uint8Array(head.length + body.length);
  encoder.encodeInto(head, out);
  out.set(body, head.length);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

const encoder = new TextEncoder();

/** `text` as Latin-1 bytes (header values are byte strings). */
export function latin1Bytes(text: string): Uint8Array {
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return encoder.encode(text);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

const HEX = encoder.encode("0123456789abcdef");

/** `data` framed as one chunk of a chunked body, in one allocation. */
export function chunk(data: Uint8Array): Uint8Array {
  const n = data.length;
  let digits = 1;
  while (n >= 16 ** digits) digits++;
  const out = new Uint8Array(digits + 2 + n + 2);
  for (let i = digits - 1, rest = n; i >= 0; i--, rest = Math.floor(rest / 16)) {
    out[i] = HEX[rest % 16]!;
  }
  out[digits] = 13;
  out[digits + 1] = 10;
  out.set(data, digits + 2);
  out[digits + 2 + n] = 13;
  out[digits + 3 + n] = 10;
  return out;
}

/** The chunked body's end: the last chunk and an empty trailer section. */
export const LAST_CHUNK: Uint8Array = encoder.encode("0\r\n\r\n");
