import { unauthorized } from "../errors.ts";
import { hashKey, isKeyShaped, type KeyEntry, type KeyStore } from "./keys.ts";

/**
 * Who a request says it is. A key caller's record is either `verified` (read from KV for
 * this request) or this process's last known copy, which the rate limiter then proves current
 * with a versionstamp check in its commit (or a fresh read).
 */
export type Caller =
  | { kind: "anonymous" }
  | { kind: "key"; entry: KeyEntry; verified: boolean };

/** The anonymous caller. */
export const ANONYMOUS_CALLER: Caller = { kind: "anonymous" };

/** 401 for a key that is not (or no longer) one of ours. */
export function unknownKey() {
  return unauthorized(
    "Incorrect API key provided. Check the key, or send no Authorization header to use the service anonymously.",
  );
}

/** 401 for a disabled key. */
export function disabledKey() {
  return unauthorized("This API key has been disabled.");
}

/** The token of an `Authorization: Bearer <token>` header value, or `null` when malformed. */
export function bearerToken(header: string): string | null {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1] ?? null;
}

/** The API key a request carries: `Authorization: Bearer <key>`, else Anthropic's
 * `x-api-key: <key>`, else Google's `x-goog-api-key: <key>` or `?key=<key>` (`googleKey`);
 * `null` for none; a 401 for a malformed `Authorization` header. */
function requestKey(request: Request, url: URL | undefined): string | null {
  const header = request.headers.get("authorization");
  if (header === null) {
    return request.headers.get("x-api-key")?.trim() ?? googleKey(request, url);
  }
  const key = bearerToken(header);
  if (key === null) {
    throw unauthorized(
      'Malformed Authorization header: expected "Authorization: Bearer <API key>".',
    );
  }
  return key;
}

/** The key of Google's APIs (the Gemini front door): the `x-goog-api-key` header, else the
 * `key` query parameter of `url`; `null` for neither. */
export function googleKey(request: Request, url: URL | undefined): string | null {
  // The Gemini CLI sends an empty x-goog-api-key when it has no key: that is no key.
  const key = request.headers.get("x-goog-api-key")?.trim() || url?.searchParams.get("key");
  return key || null;
}

/** Whether the caller authenticates the way Gemini's clients do (`x-goog-api-key`): on a path
 * several protocols share (`/v1/models`), what selects Gemini's shapes. */
export function authenticatesAsGoogle(request: Request): boolean {
  return request.headers.has("x-goog-api-key");
}

/** Resolves the request's API key to a caller (spec §5): none -> anonymous; a valid key -> that
 * key; anything else (malformed, unknown, revoked, disabled) -> 401. `url` is the request's
 * on the Gemini API's paths, where Google's `?key=` carries a key (elsewhere `key` is a query
 * parameter like any other). */
export async function authenticate(
  request: Request,
  keys: KeyStore,
  url?: URL,
): Promise<Caller> {
  const key = requestKey(request, url);
  if (key === null) return ANONYMOUS_CALLER;
  if (!isKeyShaped(key)) throw unknownKey();
  const hash = hashKey(key);
  const cached = keys.cached(hash);
  if (cached) return { kind: "key", entry: cached, verified: false };
  const entry = await keys.lookup(hash);
  if (entry === null) throw unknownKey();
  if (entry.record.disabled) throw disabledKey();
  return { kind: "key", entry, verified: true };
}

/** Reads a caller's key record again; throws the 401 if it was revoked or disabled. */
export async function verifyKey(keys: KeyStore, entry: KeyEntry): Promise<KeyEntry> {
  const fresh = await keys.lookup(entry.hash);
  if (fresh === null) throw unknownKey();
  if (fresh.record.disabled) throw disabledKey();
  return fresh;
}
