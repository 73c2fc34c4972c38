import { ApiError } from "../../errors.ts";
import type { ChatChunk, ChatCompletion, ChatRequest } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import type { SimulatorOptions } from "./provider.ts";

/** Being built (issue 3). */
export function simulateChat(
  _req: ChatRequest,
  _ctx: CallContext,
  _options: SimulatorOptions,
): Promise<ChatCompletion> {
  return Promise.reject(new ApiError(501, "server_error", "not implemented yet"));
}

/** Being built (issue 3). */
// deno-lint-ignore require-yield
export async function* simulateChatStream(
  _req: ChatRequest,
  _ctx: CallContext,
  _options: SimulatorOptions,
): AsyncIterable<ChatChunk> {
  throw new ApiError(501, "server_error", "not implemented yet");
}
