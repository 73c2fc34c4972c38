/**
 * A Google Cloud service account key, read once at start from the variable a `vertex`
 * provider's `credentials_env` names: the key file's JSON itself, or the path of the file
 * (which the start task must be allowed to read: a file under `data/`).
 */
import { ConfigError } from "../../config/error.ts";
import { isObject } from "../wire.ts";

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

/**
 * The service account in `value` (JSON, or a file path) of the variable `variable`, for the
 * provider `provider`. Throws {@link ConfigError} naming the variable (never its content) when
 * the file cannot be read or the JSON is not a service account key.
 */
export function readServiceAccount(
  provider: string,
  variable: string,
  value: string,
  readFile: (path: string) => string = Deno.readTextFileSync,
): ServiceAccount {
  const problem = (what: string) =>
    new ConfigError(
      `provider ${JSON.stringify(provider)}: credentials_env names ${variable}, ${what}; it must ` +
        "hold a service account key's JSON, or the path of its file under a directory the " +
        "gateway may read (data/)",
    );
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
