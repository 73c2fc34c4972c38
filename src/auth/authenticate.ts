import { unauthorized } from "../errors.ts";
import type { KeyStore } from "./keys.ts";
import { ANONYMOUS, type Principal } from "./principal.ts";

/** Resolves the `Authorization` header to a principal (spec §5): none → anonymous; a valid
 * key → that key; anything else (malformed, unknown, revoked, disabled) → 401. */
export async function authenticate(request: Request, keys: KeyStore): Promise<Principal> {
  const header = request.headers.get("authorization");
  if (header === null) return ANONYMOUS;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!match) {
    throw unauthorized(
      'Malformed Authorization header: expected "Authorization: Bearer <API key>".',
    );
  }
  const record = await keys.findByKey(match[1]!);
  if (record === null) {
    throw unauthorized(
      "Incorrect API key provided. Check the key, or send no Authorization header to use the service anonymously.",
    );
  }
  if (record.disabled) throw unauthorized("This API key has been disabled.");
  return { kind: "key", key: record };
}
