import type { HttpClient } from "../http/client/types.ts";
import { ApiError } from "../errors.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import type { Clock } from "../clock.ts";
import type { ProviderConfig, RouteConfig } from "../config/types.ts";
import type { ImageWork } from "../images/work.ts";
import type { Logger } from "../log/logger.ts";
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult, Usage } from "../canonical/result.ts";
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ModerationRequest,
  ModerationResult,
} from "../types/openai.ts";
import type { RerankRequest, RerankResult } from "../types/rerank.ts";

/** What a provider adapter is built from. */
export interface ProviderDeps {
  config: ProviderConfig;
  /** The API key from the provider's `api_key_env` (or its secret from Azure's
   * `bearer_token_env`, Vertex's `credentials_env`), or `null` when it has none. */
  apiKey: string | null;
  /** The environment, for credentials that are more than one key (bedrock's AWS keys). */
  env?: (name: string) => string | undefined;
  /** The client upstream calls go through. */
  http: HttpClient;
  clock: Clock;
  logger: Logger;
  /** Where CPU-heavy image work runs (a worker pool shared by the providers). */
  images: ImageWork;
  /** `logs.include_content`: whether warnings may repeat what an upstream said about a request
   * (which can quote the caller's content); off when absent. */
  includeContent?: boolean;
}

/** The variable that holds a provider's secret: `api_key_env`, or Azure's `bearer_token_env` or
 * `client_secret_env`, or Vertex's `credentials_env`; `null` when it has none. */
export function secretVariable(provider: ProviderConfig): string | null {
  return provider.api_key_env ?? provider.azure?.bearer_token_env ??
    provider.azure?.client_secret_env ?? provider.vertex?.credentials_env ?? null;
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
  /** Request fields the back end cannot honour and leaves out (`top_p`, `seed`...): adapters add
   * their wire names while translating the request, before the upstream call; the front door
   * reports them in the `x-switchyard-dropped-params` header. */
  dropped: Set<string>;
  /** Told of each route as it is tried, when the model has several (routing/routed_provider.ts):
   * the last one told is the one whose answer or error the caller gets. */
  attempting?(route: RouteConfig): void;
  /** Told which route answered, when the model has several. */
  served?(route: RouteConfig): void;
  /** Told of each route that failed and was moved past (the next route tried, or a cut stream
   * continued on another), when the model has several. */
  fellBack?(route: RouteConfig, error: unknown): void;
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
  /** One vector per input, in the encoding asked for. */
  embed?(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult>;
  /** A score for each document (or the best `top_n`), by index, in any order. */
  rerank?(req: RerankRequest, ctx: CallContext): Promise<RerankResult>;
  /** One JPEG data URL per requested image. */
  generateImages?(req: ImageRequest, ctx: CallContext): Promise<string[]>;
  /** The input tokens of a request, as the back end counts them (DESIGN §6.2). */
  countTokens?(req: CanonicalRequest, ctx: CallContext): Promise<number>;
  /** The protocols the back end takes a front door's calls in as the client wrote them. */
  readonly passes?: ReadonlySet<PassProtocol>;
  /** A call in one of {@link passes}' protocols, passed through as the client wrote it, with
   * only the model id rewritten (DESIGN §6.2's same-protocol path). */
  passthrough?(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer>;
  /** The chat models the upstream lists (model discovery, `discover: true`); every page read. */
  listModels?(signal: AbortSignal): Promise<ListedModel[]>;
}

/** Finds the adapters requests are served by (the registry of the configured providers). */
export interface ProviderLookup {
  /** The adapter for a provider id, or `undefined` when unknown or disabled. */
  get(id: string): Provider | undefined;
  /** The adapter of a model with several routes, built by `build` once per catalogue record. */
  routed(record: ModelRecord, build: () => Provider): Provider;
  /** Whether the provider is configured and has its key. */
  isAvailable(id: string): boolean;
}

/** A chat model an upstream lists, with what it states about it (`null`: not stated). */
export interface ListedModel {
  /** The upstream's id for it. */
  id: string;
  /** When it was made, in Unix seconds. */
  created: number | null;
  /** Its context window, in tokens. */
  contextLength: number | null;
  imageInput: boolean | null;
  functionCalling: boolean | null;
}

/** The protocols a back end can take calls in as written: OpenAI's Responses API
 * (`responses_api: true`), Anthropic's Messages API (the `anthropic` style), Gemini's
 * `generateContent` (the `gemini` style). */
export type PassProtocol = "openai_responses" | "anthropic_messages" | "gemini_generate";

/** A front door's call as the client made it. */
export interface PassthroughCall {
  protocol: PassProtocol;
  /** The protocol's endpoint (Gemini's are a model's methods). */
  endpoint:
    | "responses"
    | "messages"
    | "count_tokens"
    | "generateContent"
    | "streamGenerateContent"
    | "countTokens";
  /** The client's JSON body. */
  body: Record<string, unknown>;
  /** The bytes of {@link body} as the client sent them, when it is passed on unchanged but for
   * the model (so that an adapter need not write it anew). */
  raw?: Uint8Array;
  /** The client's protocol headers the upstream gets (`anthropic-version`, `anthropic-beta`). */
  headers: Record<string, string>;
  /** Fields written into the answer's response object (and a stream's) as the client knows
   * them: the gateway's `model` id; a Responses call's `previous_response_id`. */
  shown: Record<string, unknown>;
  /** How a Gemini stream is framed for the client: SSE (`?alt=sse`) or one JSON array. */
  framing?: "sse" | "json_array";
}

/** The upstream's answer to a passed-through call, with the {@link PassthroughCall.shown}
 * fields written in. */
export type PassthroughAnswer =
  | { kind: "json"; body: Record<string, unknown>; usage: Usage | null }
  | { kind: "stream"; batches: AsyncIterable<PassedBatch> };

/** The SSE bytes of one upstream read (never empty), and what the events in them said. */
export interface PassedBatch {
  bytes: Uint8Array;
  /** The usage reported so far, when an event in these bytes reported some. */
  usage: Usage | null;
  /** The upstream's `error` event in these bytes (which ends the stream), as the gateway's
   * error: what the request's log record and metrics show. */
  failure?: ApiError;
  /** The whole response object an event in these bytes ended the answer with (the Responses
   * API's `response.completed`, `.incomplete`, `.failed`). */
  final?: Record<string, unknown>;
  /** The next event's sequence number, for a protocol that numbers its events. */
  sequence?: number;
}

/** The code of a count_tokens call's error when the upstream has no count_tokens endpoint. */
export const COUNT_TOKENS_UNSUPPORTED = "count_tokens_unsupported";

/**
 * Whether `error` says that the upstream has no count_tokens endpoint, so that the caller
 * answers its own estimate. It is a 404, not the 502 of a failing upstream: a routed model
 * neither moves to its next route nor counts it against the route's breaker (clients such as
 * Claude Code count tokens before every turn; the route is well).
 */
export function lacksCountTokens(error: unknown): boolean {
  return error instanceof ApiError && error.code === COUNT_TOKENS_UNSUPPORTED;
}
