import { ApiError } from "../../errors.ts";
import type { ModerationRequest, ModerationResult } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";

/** Being built (issue 5). */
export function classify(_req: ModerationRequest, _ctx: CallContext): Promise<ModerationResult[]> {
  return Promise.reject(new ApiError(501, "server_error", "not implemented yet"));
}
