/**
 * The root certificates a provider's upstream is checked against besides the default ones:
 * the PEM text in the environment variable its `ca_certs_env` names, read once at start.
 */
import { ConfigError } from "../config/error.ts";
import type { ProviderConfig } from "../config/types.ts";

/** One PEM certificate, its markers included (text around and between them is ignored, as in
 * a CA bundle with comments). */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----/g;

/** The certificates of `provider`'s `ca_certs_env`, one PEM text each, or `null` when it has
 * none. Throws {@link ConfigError} when the variable is unset or empty, holds no certificate
 * or one that cannot be read: such a provider must not start on the default roots alone. */
export function providerCaCerts(
  provider: ProviderConfig,
  env: (name: string) => string | undefined,
): string[] | null {
  const name = provider.ca_certs_env;
  if (name === null) return null;
  const problem = (what: string) =>
    new ConfigError(
      `provider ${JSON.stringify(provider.id)}: ca_certs_env names ${name}, ${what}; it must ` +
        "hold the PEM certificate(s) the upstream's certificate chains to",
    );
  const text = env(name);
  if (text === undefined) throw problem("which is not set");
  if (text.trim() === "") throw problem("which is empty");
  const certs = text.match(PEM_CERTIFICATE);
  if (certs === null) throw problem("which holds no -----BEGIN CERTIFICATE----- block");
  try {
    // The runtime's own reading of them, as each TLS connection would: a broken certificate
    // stops the start instead of failing every call.
    Deno.createHttpClient({ caCerts: certs }).close();
  } catch (e) {
    throw problem(`whose certificates cannot be read (${e instanceof Error ? e.message : e})`);
  }
  return certs;
}
