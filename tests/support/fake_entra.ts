/**
 * A fake Microsoft Entra ID token endpoint for the client credentials grant, as Azure OpenAI's
 * callers use it: `POST /{tenant}/oauth2/v2.0/token` with a form of `grant_type`,
 * `client_id`, `client_secret` and `scope` (Azure OpenAI's); answers Entra's JSON (`token_type`,
 * `expires_in`, `ext_expires_in`, `access_token`), or its error (`invalid_client` for a wrong
 * secret, with an `AADSTS` code in `error_description`). Tokens it issued are `valid` until
 * revoked.
 */

/** What the app is: its tenant, application (client) id and secret. */
export interface EntraApp {
  tenant: string;
  clientId: string;
  clientSecret: string;
}

/** A running fake token endpoint. */
export interface FakeEntra {
  /** The app's token URL (a provider's `token_url`). */
  readonly tokenUrl: string;
  /** Token requests so far. */
  readonly requests: number;
  /** What a request did that Entra would refuse or that a client should not do. */
  readonly violations: string[];
  /** Seconds the next tokens live. */
  expiresIn: number;
  /** Statuses to answer the next requests with (503, 429...), in order. */
  faults: number[];
  /** Whether `token` is one it issued and has not revoked. */
  valid(token: string): boolean;
  /** Revokes every token issued so far. */
  revoke(): void;
  close(): Promise<void>;
}

const SCOPE = "https://cognitiveservices.azure.com/.default";

/** Starts the fake on a free port for `app`. */
export function startFakeEntra(app: EntraApp): FakeEntra {
  const issued = new Set<string>();
  const violations: string[] = [];
  let requests = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    requests++;
    const fault = fake.faults.shift();
    if (fault !== undefined) {
      return Response.json({ error: "temporarily_unavailable" }, { status: fault });
    }
    const path = new URL(request.url).pathname;
    if (request.method !== "POST" || path !== `/${app.tenant}/oauth2/v2.0/token`) {
      violations.push(`${request.method} ${path}`);
      return Response.json({ error: "invalid_request" }, { status: 404 });
    }
    if (request.headers.get("content-type") !== "application/x-www-form-urlencoded") {
      violations.push(`content-type ${request.headers.get("content-type")}`);
    }
    const form = new URLSearchParams(await request.text());
    if (form.get("grant_type") !== "client_credentials") violations.push("grant_type");
    if (form.get("scope") !== SCOPE) violations.push(`scope ${form.get("scope")}`);
    if (form.get("client_id") !== app.clientId || form.get("client_secret") !== app.clientSecret) {
      return Response.json({
        error: "invalid_client",
        error_description:
          `AADSTS7000215: Invalid client secret provided. Trace ID: 0 Correlation ID: 0`,
        error_codes: [7000215],
      }, { status: 401 });
    }
    const token = `eyJ0eXAiOiJKV1QifQ.fake-entra-${requests}-${crypto.randomUUID()}`;
    issued.add(token);
    return Response.json({
      token_type: "Bearer",
      expires_in: fake.expiresIn,
      ext_expires_in: fake.expiresIn,
      access_token: token,
    });
  });
  const fake: FakeEntra = {
    tokenUrl: `http://127.0.0.1:${server.addr.port}/${app.tenant}/oauth2/v2.0/token`,
    get requests() {
      return requests;
    },
    violations,
    expiresIn: 3599,
    faults: [],
    valid: (token) => issued.has(token),
    revoke: () => issued.clear(),
    close: () => server.shutdown(),
  };
  return fake;
}
