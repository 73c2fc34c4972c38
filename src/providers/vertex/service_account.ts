/**
 * Google Cloud credentials, read once at start from the variable a `vertex` provider's
 * `credentials_env` names: a service account key, or a workload identity federation
 * configuration (`external_account`); the file's JSON itself, or the path of the file (which the
 * start task must be allowed to read: a file under `data/`).
 */
import { ConfigError } from "../../config/error.ts";
import { isObject } from "../wire.ts";
import { type ExternalAccount, parseExternalAccount } from "./external_account.ts";

/** What signing an assertion takes from a service account key. */
export interface ServiceAccount {
  clientEmail: string;
  /** The PKCS#8 private key, DER bytes. */
  privateKey: Uint8Array<ArrayBuffer>;
  /** The key's id (the JWT's `kid`), or `null` when the file has none. */
  privateKeyId: string | null;
}

/** A PEM private key: its base64 between the PKCS#8 markers. */
const PKCS8_PEM = /-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----/;

/** Google credentials: a service account's key, or a workload identity federation
 * configuration. */
export type GoogleCredentials =
  | { kind: "service_account"; account: ServiceAccount }
  | { kind: "external_account"; account: ExternalAccount };

/**
 * The credentials in `value` (JSON, or a file path) of the variable `variable`, for the provider
 * `provider`: a service account key, or an `external_account` configuration (workload identity
 * federation). Throws {@link ConfigError} naming the variable (never its content) when the file
 * cannot be read or the JSON is neither.
 */
export function readGoogleCredentials(
  provider: string,
  variable: string,
  value: string,
  readFile: (path: string) => string = Deno.readTextFileSync,
): GoogleCredentials {
  const problem = (what: string) =>
    new ConfigError(
      `provider ${JSON.stringify(provider)}: credentials_env names ${variable}, ${what}; it must ` +
        "hold a service account key's JSON or an external_account configuration's, or the path " +
        "of its file under a directory the gateway may read (data/)",
    );
  const key = readKeyObject(value, readFile, problem);
  if (key.type === "external_account") {
    return { kind: "external_account", account: parseExternalAccount(key, problem) };
  }
  return { kind: "service_account", account: serviceAccount(key, problem) };
}

/** The service account key in `value` (JSON, or a file path), as {@link readGoogleCredentials}
 * reads it; anything else is a {@link ConfigError}. */
export function readServiceAccount(
  provider: string,
  variable: string,
  value: string,
  readFile: (path: string) => string = Deno.readTextFileSync,
): ServiceAccount {
  const credentials = readGoogleCredentials(provider, variable, value, readFile);
  if (credentials.kind === "service_account") return credentials.account;
  throw new ConfigError(
    `provider ${JSON.stringify(provider)}: credentials_env names ${variable}, which holds an ` +
      "external_account configuration, not a service account key",
  );
}

/** The JSON object in `value`, or in the file it names. */
function readKeyObject(
  value: string,
  readFile: (path: string) => string,
  problem: (what: string) => Error,
): Record<string, unknown> {
  let text = value.trim();
  if (!text.startsWith("{")) {
    try {
      text = readFile(text);
    } catch (e) {
      const why = e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied
        ? "which the gateway is not allowed to read (the start task reads only switchyard.json and data/)"
        : e instanceof Deno.errors.NotFound
        ? "which does not exist"
        : "which cannot be read";
      throw problem(`whose file ${JSON.stringify(clipPath(value.trim()))} is a path ${why}`);
    }
  }
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    throw problem("which is not JSON");
  }
  if (!isObject(key)) throw problem("which is not a JSON object");
  return key;
}

/** A service account key's fields. */
function serviceAccount(
  key: Record<string, unknown>,
  problem: (what: string) => Error,
): ServiceAccount {
  if (key.type !== undefined && key.type !== "service_account") {
    throw problem(`whose type is ${JSON.stringify(String(key.type))}, not "service_account"`);
  }
  if (typeof key.client_email !== "string" || key.client_email === "") {
    throw problem("whose key has no client_email");
  }
  const pem = typeof key.private_key === "string" ? PKCS8_PEM.exec(key.private_key) : null;
  let privateKey: Uint8Array<ArrayBuffer> | null = null;
  try {
    privateKey = pem === null ? null : Uint8Array.fromBase64(pem[1]!.replace(/\s+/g, ""));
  } catch {
    privateKey = null;
  }
  if (privateKey === null || privateKey.length === 0) {
    throw problem("whose private_key is not a PEM -----BEGIN PRIVATE KEY----- block");
  }
  return {
    clientEmail: key.client_email,
    privateKey,
    privateKeyId: typeof key.private_key_id === "string" ? key.private_key_id : null,
  };
}

/** A path as an error may show it: 200 characters at most. */
function clipPath(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 200)}...`;
}
