/**
 * The HTTP client the providers call their upstreams with: a request in, an answer whose body
 * is read piece by piece (no web streams between the socket and the SSE decoder).
 */
import type { BytesPrefix, TextPrefix } from "../byte_reader.ts";

/** One request to an upstream. */
export interface ClientRequest {
  method: string;
  url: string;
  /** Header fields to send (names as given). */
  headers: Readonly<Record<string, string>>;
  /** Sent (a string as UTF-8; parts one after the other) with its Content-Length. */
  body?: string | Uint8Array | readonly Uint8Array[];
  /** Aborts the call: connecting, waiting for the head, or reading the body. */
  signal: AbortSignal;
}

/** An upstream's answer, its body still to be read. */
export interface ClientResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The body's declared length (Content-Length), or `null`. */
  readonly length: number | null;
  /** The body's next bytes (valid until the next read), or `null` at its end. */
  read(): Promise<Uint8Array | null>;
  /** The body's next bytes if some have arrived (valid until the next {@link more}), `null`
   * at its end, or `undefined` when {@link more} must wait for more. Waits for nothing: with
   * `more`, a stream's reader runs no async function per piece of its own. */
  take(): Uint8Array | null | undefined;
  /** Waits for more of the body (for {@link take}). */
  more(): Promise<void>;
  /** The body as UTF-8 text, at most `maxBytes` of it (a longer body is cut there). */
  text(maxBytes: number): Promise<TextPrefix>;
  /** The body's bytes, at most `maxBytes` of them (a longer body is cut there). */
  bytes(maxBytes: number): Promise<BytesPrefix>;
  /** Stops reading: the rest of the body is not waited for. */
  cancel(): void;
}

/** Sends requests to upstreams. */
export interface HttpClient {
  request(request: ClientRequest): Promise<ClientResponse>;
  /** Closes the idle connections it keeps. */
  close(): void;
  /** Lets go of what it keeps only to be faster (buffers), once the process went quiet. */
  trim?(): void;
}
