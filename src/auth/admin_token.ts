import { createHash, timingSafeEqual } from "node:crypto";
import { unauthorized } from "../errors.ts";
import { bearerToken } from "./authenticate.ts";

function digest(text: string): Uint8Array {
  return createHash("sha256").update(text).digest();
}

/** The admin API's bearer token (`SWITCHYARD_ADMIN_TOKEN`), checked in constant time: both
 * sides are hashed to 32 bytes first, so neither the content nor the length leaks. */
export class AdminToken {
  readonly #digest: Uint8Array;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  /** Throws 401 unless the request carries `Authorization: Bearer <the token>`. */
  authorize(request: Request): void {
    const header = request.headers.get("authorization");
    const token = header === null ? null : bearerToken(header);
    if (token === null) {
      throw unauthorized(
        'The admin API needs "Authorization: Bearer <SWITCHYARD_ADMIN_TOKEN>".',
      );
    }
    if (!timingSafeEqual(digest(token), this.#digest)) {
      throw unauthorized("Incorrect admin token.");
    }
  }
}
