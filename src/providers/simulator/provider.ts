import { ApiError } from "../../errors.ts";
import type { ChatChunk, ChatCompletion } from "../../types/openai.ts";
import type { ProviderDeps } from "../registry.ts";
import type { Provider } from "../types.ts";

/** The built-in simulator (being built: issue 3). */
export class SimulatorProvider implements Provider {
  readonly id: string;

  constructor(deps: ProviderDeps) {
    this.id = deps.config.id;
  }

  chat(): Promise<ChatCompletion> {
    return Promise.reject(new ApiError(501, "server_error", "not implemented yet"));
  }

  // deno-lint-ignore require-yield
  async *chatStream(): AsyncIterable<ChatChunk> {
    throw new ApiError(501, "server_error", "not implemented yet");
  }
}
