/** Who owns files and batches: the API key of the request (the Files and Batch APIs need one). */
import { ApiError, unauthorized } from "../../errors.ts";
import type { KeyRecord } from "../../auth/principal.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { quote } from "../../quote.ts";

/** The request's key; 401 for an anonymous caller. */
export function ownerKey(ctx: RequestContext): KeyRecord {
  if (ctx.principal.kind !== "key") {
    throw unauthorized(
      "The Files and Batch APIs need an API key: files and batches belong to the key that made them.",
    );
  }
  return ctx.principal.key;
}

/** 404 for a file or batch that does not exist or is another key's (the same answer). */
export function noSuch(what: "File" | "Batch", id: string): ApiError {
  return new ApiError(404, "invalid_request_error", `No such ${what} object: ${quote(id)}.`, {
    code: "not_found",
    param: "id",
  });
}
