/**
 * The {@link HttpClient} over a `fetch` function: for upstreams reached through an HTTP proxy
 * (which fetch honours from the environment), and for tests that answer with canned
 * `Response`s. It behaves as the native client does where fetch would differ: it follows no
 * redirect (a 3xx is the answer, its `location` unfollowed: fetch would resend an `x-api-key`
 * to wherever it points), asks for uncompressed answers, refusing a compressed one, and refuses
 * a transfer coding besides chunked.
 */
import {
  ByteReader,
  type BytesPrefix,
  readBytes,
  readText,
  type TextPrefix,
} from "../byte_reader.ts";
import { concatBytes } from "../bytes.ts";
import { ACCEPT_ENCODING, IDENTITY, refuseEncoded } from "./content_encoding.ts";
import { refuseTransferCoded } from "./transfer_encoding.ts";
import type { ClientRequest, ClientResponse, HttpClient } from "./types.ts";

/** Options for {@link FetchHttpClient}. */
export interface FetchHttpClientOptions {
  /** The Deno client every request goes through (`Deno.createHttpClient`, for root
   * certificates of its own); closed with this client. Default: fetch's shared one. */
  client?: Deno.HttpClient;
}

/** Calls `fetch` for every request. */
export class FetchHttpClient implements HttpClient {
  readonly #fetch: typeof fetch;
  readonly #client: Deno.HttpClient | undefined;
  #closed = false;
  /** Each headers object seen (providers reuse theirs), with `accept-encoding: identity`. */
  readonly #headers = new WeakMap<object, Record<string, string>>();

  constructor(fetchFn: typeof fetch = fetch, options: FetchHttpClientOptions = {}) {
    this.#fetch = fetchFn;
    this.#client = options.client;
  }

  async request(request: ClientRequest): Promise<ClientResponse> {
    const init: RequestInit & { client?: Deno.HttpClient } = {
      method: request.method,
      headers: this.#identity(request.headers),
      signal: request.signal,
      redirect: "manual",
    };
    const body = request.body;
    if (body !== undefined) {
      init.body = typeof body === "string"
        ? body
        : (body instanceof Uint8Array ? body : concatBytes(body)) as Uint8Array<ArrayBuffer>;
    }
    if (this.#client !== undefined) init.client = this.#client;
    let response: Response;
    try {
      response = await this.#fetch(request.url, init);
    } catch (e) {
      throw withCause(e);
    }
    // Fetch inflates nothing once the request names its accept-encoding: a compressed answer
    // would reach the parser as it came. It undoes chunked framing only, so a body under
    // another transfer coding would too.
    if (response.body !== null) {
      try {
        refuseTransferCoded(response.headers.get("transfer-encoding"));
        refuseEncoded(response.headers.get("content-encoding"));
      } catch (e) {
        response.body.cancel().catch(() => {});
        throw e;
      }
    }
    return new FetchedResponse(response);
  }

  close(): void {
    // A closed Deno client throws when closed again, and fails the requests still sent: none
    // falls back to fetch's own client and its roots.
    if (this.#closed) return;
    this.#closed = true;
    this.#client?.close();
  }

  /** `headers` with `accept-encoding: identity` in place of any the caller gave. */
  #identity(headers: Readonly<Record<string, string>>): Record<string, string> {
    let out = this.#headers.get(headers);
    if (out === undefined) {
      out = {};
      for (const [name, value] of Object.entries(headers)) {
        if (name.toLowerCase() !== ACCEPT_ENCODING) out[name] = value;
      }
      out[ACCEPT_ENCODING] = IDENTITY;
      this.#headers.set(headers, out);
    }
    return out;
  }
}

/** fetch's own failure ("fetch failed") with what failed in its message, as the native client
 * says it (an untrusted certificate, a refused connection); any other error as it is. */
function withCause(e: unknown): unknown {
  if (!(e instanceof TypeError) || !(e.cause instanceof Error)) return e;
  return new TypeError(`${e.message}: ${e.cause.message}`, { cause: e.cause });
}

/** A fetch `Response` read as a {@link ClientResponse}. */
class FetchedResponse implements ClientResponse {
  readonly #response: Response;
  #reader: ByteReader | null = null;
  /** What the last `more` read, until taken (`null`, the end, stays). */
  #piece: Uint8Array | null | undefined = undefined;

  constructor(response: Response) {
    this.#response = response;
  }

  get status(): number {
    return this.#response.status;
  }

  get headers(): Headers {
    return this.#response.headers;
  }

  get length(): number | null {
    // A Transfer-Encoding frames the body, whatever Content-Length says (RFC 9112 §6.3).
    if (this.#response.headers.has("transfer-encoding")) return null;
    const declared = this.#response.headers.get("content-length");
    return declared === null || !/^\d+$/.test(declared) ? null : Number(declared);
  }

  read(): Promise<Uint8Array | null> {
    const body = this.#response.body;
    if (body === null) return Promise.resolve(null);
    this.#reader ??= new ByteReader(body);
    return this.#reader.read();
  }

  take(): Uint8Array | null | undefined {
    const piece = this.#piece;
    if (piece !== null) this.#piece = undefined;
    return piece;
  }

  async more(): Promise<void> {
    this.#piece = await this.read();
  }

  async text(maxBytes: number): Promise<TextPrefix> {
    const length = this.length;
    // A declared length is what fetch holds the body to: read it in one piece.
    if (length !== null && length <= maxBytes) {
      return { text: await this.#response.text(), complete: true };
    }
    return await readText(this.#response.body, maxBytes);
  }

  async bytes(maxBytes: number): Promise<BytesPrefix> {
    const length = this.length;
    if (length !== null && length <= maxBytes) {
      return { bytes: await this.#response.bytes(), complete: true };
    }
    return await readBytes(this.#response.body, maxBytes);
  }

  cancel(): void {
    if (this.#reader !== null) this.#reader.cancel();
    else this.#response.body?.cancel().catch(() => {});
  }
}
