/**
 * AWS Signature Version 4 (header form), with WebCrypto: the canonical request, the string to
 * sign, the signing key derived by HMAC-SHA256 from the secret, date, region and service, and
 * the `Authorization` header over every header given plus `host`, `x-amz-date`,
 * `x-amz-content-sha256` and (with temporary credentials) `x-amz-security-token`.
 */
import { concatBytes } from "../../http/bytes.ts";

/** AWS credentials: an access key pair, and a session token with temporary ones. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What is signed: one HTTP request, at a time, for a region and a service. */
export interface SigningInput {
  credentials: AwsCredentials;
  /** The signing time, in epoch milliseconds. */
  now: number;
  region: string;
  /** The signing name of the service (`bedrock`). */
  service: string;
  method: string;
  /** The whole URL as it is sent (its path already percent-encoded). */
  url: string;
  /** The headers to send and sign (besides the ones added here). */
  headers: Readonly<Record<string, string>>;
  /** The body as sent (text as UTF-8; parts one after the other). */
  body: string | Uint8Array | readonly Uint8Array[];
}

/** Headers no signer signs: hop-by-hop, or changed by proxies (the AWS SDK's list). */
const UNSIGNED = new Set([
  "authorization",
  "cache-control",
  "connection",
  "expect",
  "from",
  "keep-alive",
  "max-forwards",
  "pragma",
  "referer",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
]);

const encoder = new TextEncoder();

/**
 * The request's headers with its signature: `headers` plus `x-amz-date`,
 * `x-amz-content-sha256`, `x-amz-security-token` (when the credentials have a session token)
 * and `authorization`. The path is encoded once more for the canonical request (every
 * service but S3 signs the path as sent, encoded again), query parameters sorted by name.
 */
export async function signRequest(
  input: SigningInput,
  keys?: SigningKeys,
): Promise<Record<string, string>> {
  const url = new URL(input.url);
  const amzDate = new Date(input.now).toISOString().replace(/[-:]|\.\d{3}/g, "");
  const day = amzDate.slice(0, 8);
  const payloadHash = hex(await sha256(bytesOf(input.body)));
  const headers: Record<string, string> = {
    ...input.headers,
    "x-amz-date": amzDate,
    "x-amz-content-sha256": payloadHash,
  };
  if (input.credentials.sessionToken) {
    headers["x-amz-security-token"] = input.credentials.sessionToken;
  }
  const signed = new Map<string, string>([["host", url.host]]);
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (UNSIGNED.has(lower) || lower === "host") continue;
    signed.set(lower, value.trim().replace(/\s+/g, " "));
  }
  const names = [...signed.keys()].sort();
  const canonical = [
    input.method.toUpperCase(),
    canonicalPath(url.pathname),
    canonicalQuery(url.searchParams),
    names.map((name) => `${name}:${signed.get(name)}\n`).join(""),
    names.join(";"),
    payloadHash,
  ].join("\n");
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    amzDate,
    scope,
    hex(await sha256(encoder.encode(canonical))),
  ].join("\n");
  const key = keys
    ? await keys.get(input.credentials.secretAccessKey, day, input.region, input.service)
    : await signingKey(input.credentials.secretAccessKey, day, input.region, input.service);
  const signature = hex(await crypto.subtle.sign("HMAC", key, encoder.encode(stringToSign)));
  headers.authorization =
    `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${names.join(";")}, Signature=${signature}`;
  return headers;
}

/** The key of one day, region and service: HMAC-SHA256 chained from `AWS4` + the secret. */
async function signingKey(
  secret: string,
  day: string,
  region: string,
  service: string,
): Promise<CryptoKey> {
  let key = await hmac(encoder.encode(`AWS4${secret}`), day);
  for (const part of [region, service, "aws4_request"]) key = await hmac(key, part);
  return await hmacKey(key);
}

/**
 * The signing key of the current day, kept by one signer until the day or its secret (a role's
 * renewed credentials) changes: deriving it is four HMACs, most of a signature's cost (a 10 KB
 * body: 477 µs a signature with the key derived each time, 124 µs with it kept).
 */
export class SigningKeys {
  #for = "";
  #secret = "";
  #key: Promise<CryptoKey> | null = null;

  /** The key for `day` (`YYYYMMDD`), derived once. */
  get(secret: string, day: string, region: string, service: string): Promise<CryptoKey> {
    const id = `${day}/${region}/${service}`;
    if (this.#key === null || this.#for !== id || this.#secret !== secret) {
      this.#for = id;
      this.#secret = secret;
      this.#key = signingKey(secret, day, region, service);
      // A failed derivation is not kept.
      this.#key.catch(() => {
        if (this.#for === id) this.#key = null;
      });
    }
    return this.#key;
  }
}

/** The path as the canonical request has it: `.` and `..` segments resolved, empty ones
 * dropped, then each segment URI-encoded (again). */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && path.endsWith("/") ? "/" : "";
  return `/${segments.map(uriEncode).join("/")}${trailing}`;
}

/** The query as the canonical request has it: names and values URI-encoded, sorted. */
function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

/** RFC 3986 encoding: everything but `A-Z a-z 0-9 - _ . ~` as `%XX`. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The bytes of a body (copied only from parts, or from a view over a shared buffer, which
 * WebCrypto refuses). */
function bytesOf(body: string | Uint8Array | readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const bytes = typeof body === "string"
    ? encoder.encode(body)
    : body instanceof Uint8Array
    ? body
    : concatBytes(body);
  return bytes.buffer instanceof ArrayBuffer ? bytes as Uint8Array<ArrayBuffer> : bytes.slice();
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer> {
  return await crypto.subtle.digest("SHA-256", bytes);
}

async function hmacKey(key: ArrayBuffer | Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

async function hmac(
  key: ArrayBuffer | Uint8Array<ArrayBuffer>,
  text: string,
): Promise<ArrayBuffer> {
  return await crypto.subtle.sign("HMAC", await hmacKey(key), encoder.encode(text));
}

function hex(bytes: ArrayBuffer): string {
  return new Uint8Array(bytes).toHex();
}
