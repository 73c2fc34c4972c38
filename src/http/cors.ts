/** Headers a browser may read from our responses. */
const EXPOSED = [
  "x-request-id",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-tokens",
  "retry-after",
  "x-switchyard-dropped-params",
  "x-switchyard-route",
  "x-switchyard-cache",
].join(", ");

const ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

/** CORS policy for the configured origins (`*` allows every origin). */
export class Cors {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.#any = origins.includes("*");
    this.#origins = new Set(origins);
  }

  /** The value for `Access-Control-Allow-Origin`, or `null` when the origin is not allowed. */
  allowOrigin(origin: string | null): string | null {
    if (origin === null) return null;
    if (this.#any) return "*";
    return this.#origins.has(origin) ? origin : null;
  }

  /** Whether a request is a CORS preflight. */
  isPreflight(request: Request): boolean {
    return request.method === "OPTIONS" &&
      request.headers.has("origin") &&
      request.headers.has("access-control-request-method");
  }

  /** Answers a preflight: 204 with the allow headers, or 403 for an origin not allowed. */
  preflight(request: Request): Response {
    const allow = this.allowOrigin(request.headers.get("origin"));
    const headers = new Headers();
    if (!this.#any) headers.set("vary", "Origin");
    if (allow === null) {
      headers.set("content-type", "application/json");
      return new Response(
        JSON.stringify({
          error: {
            message: "This origin is not allowed by the server's CORS configuration.",
            type: "invalid_request_error",
            code: "cors_origin_not_allowed",
            param: null,
          },
        }),
        { status: 403, headers },
      );
    }
    headers.set("access-control-allow-origin", allow);
    headers.set("access-control-allow-methods", ALLOWED_METHODS);
    headers.set(
      "access-control-allow-headers",
      request.headers.get("access-control-request-headers") ?? "authorization, content-type",
    );
    headers.set("access-control-max-age", "86400");
    return new Response(null, { status: 204, headers });
  }

  /** Adds the CORS response headers for a non-preflight request: with a list of origins,
   * `Vary: Origin` on every answer, since whether it allows one depends on the `Origin` (a
   * shared cache must not hand an answer without them to an origin that is allowed). */
  decorate(request: Request, headers: Headers): void {
    if (!this.#any && !/\borigin\b/i.test(headers.get("vary") ?? "")) {
      headers.append("vary", "Origin");
    }
    const allow = this.allowOrigin(request.headers.get("origin"));
    if (allow === null) return;
    headers.set("access-control-allow-origin", allow);
    headers.set("access-control-expose-headers", EXPOSED);
  }
}
