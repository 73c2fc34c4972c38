/**
 * An HTTP client that signs every request it sends with AWS Signature Version 4 (each attempt
 * anew, so a retry carries its own time), over the client that sends it.
 */
import type { Clock } from "../../clock.ts";
import type { ClientRequest, ClientResponse, HttpClient } from "../../http/client/types.ts";
import type { CredentialSource } from "./credentials.ts";
import { SigningKeys, signRequest } from "./sigv4.ts";

/** Where and as whom requests are signed. */
export interface Signing {
  credentials: CredentialSource;
  region: string;
  /** The service's signing name (`bedrock`). */
  service: string;
  clock: Clock;
}

/** Signs each request (see {@link signRequest}) before `http` sends it. */
export class SigningClient implements HttpClient {
  readonly #http: HttpClient;
  readonly #signing: Signing;
  readonly #keys = new SigningKeys();

  constructor(http: HttpClient, signing: Signing) {
    this.#http = http;
    this.#signing = signing;
  }

  async request(request: ClientRequest): Promise<ClientResponse> {
    const { region, service, clock } = this.#signing;
    const credentials = await this.#signing.credentials.current(request.signal);
    const headers = await signRequest({
      credentials,
      now: clock.now(),
      region,
      service,
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: request.body ?? "",
    }, this.#keys);
    return await this.#http.request({ ...request, headers });
  }

  /** The client it sends through is closed by its owner (the registry). */
  close(): void {}
}
