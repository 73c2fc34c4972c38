import type { ModelRecord } from "../catalogue/model.ts";
import type { Clock } from "../clock.ts";
import type { ProviderConfig, RouteConfig } from "../config.ts";
import type { ImageWork } from "../images/work.ts";
import type { Logger } from "../log/logger.ts";
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import type { ImageRequest, ModerationRequest, ModerationResult } from "../types/openai.ts";
import type { ResponsesAnswer } from "./openai_responses.ts";

/** What a provider adapter is built from. */
export interface ProviderDeps {
  config: ProviderConfig;
  /** The API key from the provider's `api_key_env`, or `null` when it has none. */
  apiKey: string | null;
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  /** Where CPU-heavy image work runs (a worker pool shared by the providers). */
  images: ImageWork;
  /** `logs.include_content`: whether warnings may repeat what an upstream said about a request
   * (which can quote the caller's content); off when absent. */
  includeContent?: boolean;
}

/** What an adapter gets with every call (DESIGN §6). */
export interface CallContext {
  /** Fires when the client disconnects or the deadline passes: abort the upstream call. */
  signal: AbortSignal;
  requestId: string;
  /** The model id the upstream knows (the record's `upstream_model`). */
  upstreamModel: string;
  /** The catalogue record of the model being called. */
  model: ModelRecord;
  /** Request fields the back end cannot honour and leaves out (`top_p`, `seed`…): adapters add
   * their wire names while translating the request, before the upstream call; the front door
   * reports them in the `x-switchyard-dropped-params` header. */
  dropped: Set<string>;
  /** Told which route answered, when the model has several (routing/routed_provider.ts). */
  served?(route: RouteConfig): void;
}

/** One upstream style's adapter (DESIGN §6.2): translates canonical requests to its wire
 * format and its answers back, and maps failures to ApiErrors. */
export interface Provider {
  readonly id: string;
  chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult>;
  /**
   * The answer's events in order, grouped as they became ready together (the events of one
   * upstream network read), so that a burst costs one client write. Groups are never empty. A
   * failure after the first group is thrown as an ApiError; the consumer stops iterating
   * (calling `return`) on disconnect.
   */
  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]>;
  moderate?(req: ModerationRequest, ctx: CallContext): Promise<ModerationResult[]>;
  /** One JPEG data URL per requested image. */
  generateImages?(req: ImageRequest, ctx: CallContext): Promise<string[]>;
  /** OpenAI's Responses API passed through (`responses_api: true`): the body as the client
   * sent it, with the upstream's model id. */
  responses?(body: Record<string, unknown>, ctx: CallContext): Promise<ResponsesAnswer>;
}
