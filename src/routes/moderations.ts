import type { RequestContext } from "../context.ts";
import { ApiError } from "../errors.ts";

/** Being built: see the open issue for this endpoint. */
export function createModeration(_ctx: RequestContext): Response {
  throw new ApiError(501, "server_error", "not implemented yet", { code: "not_implemented" });
}
