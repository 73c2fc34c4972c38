/**
 * The signed JWT a service account exchanges for an access token (RFC 7523's JWT bearer grant,
 * as Google's OAuth 2.0 server takes it): RS256 over `{iss, scope, aud, iat, exp}`.
 */
import type { ServiceAccount } from "./service_account.ts";

/** The scope Vertex AI's calls need. */
export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** Seconds an assertion is valid (Google's maximum). */
const LIFETIME_SECONDS = 3600;

const encoder = new TextEncoder();

/** The service account's private key, for signing (throws when the bytes are no RSA key). */
export function importSigningKey(account: ServiceAccount): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "pkcs8",
    account.privateKey,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["sign"],
  );
}

/** An assertion for `tokenUrl` (its audience), issued at `nowSeconds`, signed with `key`. */
export async function signedAssertion(
  account: ServiceAccount,
  key: CryptoKey,
  tokenUrl: string,
  nowSeconds: number,
): Promise<string> {
  const header: Record<string, string> = { alg: "RS256", typ: "JWT" };
  if (account.privateKeyId !== null) header.kid = account.privateKeyId;
  const claims = {
    iss: account.clientEmail,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: tokenUrl,
    iat: nowSeconds,
    exp: nowSeconds + LIFETIME_SECONDS,
  };
  const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, encoder.encode(signed));
  return `${signed}.${
    new Uint8Array(signature).toBase64({ alphabet: "base64url", omitPadding: true })
  }`;
}

function base64url(text: string): string {
  return encoder.encode(text).toBase64({ alphabet: "base64url", omitPadding: true });
}
