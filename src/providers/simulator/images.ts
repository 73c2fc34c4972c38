import { ApiError } from "../../errors.ts";
import type { ImageRequest } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";

/** Being built (issue 5). */
export function renderImages(_req: ImageRequest, _ctx: CallContext): Promise<string[]> {
  return Promise.reject(new ApiError(501, "server_error", "not implemented yet"));
}
