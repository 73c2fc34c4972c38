/**
 * Which HTTP client upstream calls use: Switchyard's own, unless `SWITCHYARD_HTTP_CLIENT=fetch`
 * forces `fetch` or the environment asks for what only `fetch` does: going through an HTTP
 * proxy, or Deno's OpenTelemetry spans and trace context propagation for each HTTP attempt
 * (`OTEL_DENO`, or `OTEL_DENO_TRACING`, as Deno reads them).
 */
import { denoOtel } from "../../telemetry/deno_otel.ts";
import { FetchHttpClient } from "./fetch.ts";
import { NativeHttpClient } from "./native.ts";
import type { HttpClient } from "./types.ts";

/** The variable that picks the client: `native` (the default, as if unset: a proxy or tracing
 * still goes through fetch) or `fetch`. */
export const CLIENT_VARIABLE = "SWITCHYARD_HTTP_CLIENT";
/** The proxy variables Deno's fetch honours. */
const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/** Why upstream calls must go through fetch under `env` (the variable that says so), or
 * `null` when Switchyard's own client serves. Throws a `RangeError` naming
 * {@link CLIENT_VARIABLE} when it holds anything but `native` or `fetch`. */
export function fetchReason(env: (name: string) => string | undefined): string | null {
  const chosen = env(CLIENT_VARIABLE) ?? "";
  if (chosen === "fetch") return `${CLIENT_VARIABLE} is fetch`;
  if (chosen !== "" && chosen !== "native") {
    throw new RangeError(
      `${CLIENT_VARIABLE} must be "native" or "fetch", not ${JSON.stringify(chosen)}`,
    );
  }
  const proxy = PROXY_VARIABLES.find((name) => (env(name) ?? "") !== "");
  if (proxy !== undefined) return `${proxy} is set`;
  if (denoOtel(env).tracing) return "OTEL_DENO is on";
  return null;
}

/** The client for upstream calls under `env` (throws as {@link fetchReason} does); with
 * `caCerts`, one whose TLS connections also trust those root certificates (PEM), with
 * connections of its own. */
export function upstreamClient(
  env: (name: string) => string | undefined,
  caCerts?: string[],
): HttpClient {
  if (fetchReason(env) === null) return new NativeHttpClient(caCerts ? { caCerts } : {});
  if (caCerts === undefined) return new FetchHttpClient();
  return new FetchHttpClient(fetch, { client: Deno.createHttpClient({ caCerts }) });
}
