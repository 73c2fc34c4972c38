/**
 * The {@link HttpClient} over a `fetch` function: for upstreams reached through an HTTP proxy
 * (which fetch honours from the environment), and for tests that answer with canned
 * `Response`s.
 */
import { ByteReader, readText, type TextPrefix } from "../byte_reader.ts";
import type { ClientRequest, ClientResponse, HttpClient } from "./types.ts";

/** Calls `fetch` for every request. */
export class FetchHttpClient implements HttpClient {
  readonly #fetch: typeof fetch;

  constructor(fetchFn: typeof fetch = fetch) {
    this.#fetch = fetchFn;
  }

  async request(request: ClientRequest): Promise<ClientResponse> {
    const init: RequestInit = {
      method: request.method,
      headers: request.headers,
      signal: request.signal,
    };
    if (request.body !== undefined) init.body = request.body;
    return new FetchedResponse(await this.#fetch(request.url, init));
  }

  close(): void {}
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

  cancel(): void {
    if (this.#reader !== null) this.#reader.cancel();
    else this.#response.body?.cancel().catch(() => {});
  }
}
