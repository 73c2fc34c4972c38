import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import { type ApiError, upstreamError, upstreamTimeout } from "../../errors.ts";
import type { SseEvent } from "../../http/sse.ts";
import { EventBatches, type EventTranslation } from "../event_batches.ts";
import { toGeminiRequest } from "./request.ts";
import { fromGeminiResponse } from "./response.ts";
import { GeminiStreamTranslator } from "./stream.ts";
import { listGeminiModels } from "../model_lists.ts";
import { GeminiForwarder } from "./passthrough.ts";
import type {
  CallContext,
  ListedModel,
  PassProtocol,
  PassthroughAnswer,
  PassthroughCall,
  Provider,
  ProviderDeps,
} from "../types.ts";
import type { UpstreamErrorDetail } from "../upstream/error_detail.ts";
import { mapStreamError } from "../upstream/error_mapping.ts";
import { chatPost } from "../upstream/request.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { Upstream, type UpstreamStyle } from "../upstream/upstream.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { geminiEmbed } from "./embeddings.ts";
import { modelPath } from "./model_path.ts";
import { isObject, parseEventData } from "../wire.ts";

/**
 * Reads a Gemini error body (`{"error": {"code", "message", "status", "details"}}`): the
 * message; `status` (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`...) as the type; the `reason` of
 * an `ErrorInfo` detail (`API_KEY_INVALID`...) as the code, else the status, so that an
 * upstream 400 passed on has one (DESIGN §7).
 */
export function parseGeminiError(body: unknown): UpstreamErrorDetail {
  const detail: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };
  if (!isObject(body) || !isObject(body.error)) return detail;
  const error = body.error;
  if (typeof error.message === "string") detail.message = error.message;
  if (typeof error.status === "string") detail.type = detail.code = error.status;
  const info = Array.isArray(error.details)
    ? error.details.find((d) => isObject(d) && typeof d.reason === "string")
    : undefined;
  if (isObject(info)) detail.code = info.reason as string;
  return detail;
}

/**
 * The errors Gemini's status alone does not say (the rest follow the common table): a bad key
 * is a 400 `API_KEY_INVALID` and a region or billing problem a 400 `FAILED_PRECONDITION`,
 * both the operator's to fix (502, no upstream text); Gemini's own deadline
 * (`DEADLINE_EXCEEDED`) is a 504.
 */
export function mapGeminiError(
  provider: string,
  status: number,
  detail: UpstreamErrorDetail,
): ApiError | null {
  if (
    detail.code === "API_KEY_INVALID" ||
    (status === 400 && /API key not valid/i.test(detail.message ?? ""))
  ) {
    return upstreamError(
      `The upstream provider "${provider}" refused the gateway's credentials (HTTP ${status} API_KEY_INVALID); the operator must check its API key.`,
    );
  }
  if (detail.type === "FAILED_PRECONDITION") {
    return upstreamError(
      `The upstream provider "${provider}" cannot serve the gateway (HTTP ${status} FAILED_PRECONDITION); the operator must check its account.`,
    );
  }
  if (status === 504 || detail.type === "DEADLINE_EXCEEDED") {
    return upstreamTimeout(
      `The upstream provider "${provider}" did not answer within its own deadline (HTTP ${status} DEADLINE_EXCEEDED).`,
    );
  }
  return null;
}

/** What a style on Gemini's wire format at other URLs with other auth (Vertex AI) gives the
 * adapter. */
export interface GeminiWire {
  /** How its upstream is called (in place of `x-goog-api-key` on `base_url`). */
  style: UpstreamStyle;
  /** The path of a model's method (`generateContent`, `streamGenerateContent?alt=sse`). */
  path(upstreamModel: string, method: string): string;
}

/**
 * The adapter for Google's Gemini API (`generateContent`, `streamGenerateContent?alt=sse`,
 * `x-goog-api-key`). The request is translated before the upstream call (a 400 for what
 * cannot be sent, `ctx.dropped` filled): for a stream, when its first batch is asked for.
 * Calls of the Gemini front door are passed through as written (passthrough.ts).
 */
export class GeminiProvider implements Provider {
  readonly id: string;
  readonly passes: ReadonlySet<PassProtocol> = new Set(["gemini_generate"]);
  readonly #deps: ProviderDeps;
  readonly #upstream: Upstream;
  readonly #forwarder: GeminiForwarder;
  readonly #path: (upstreamModel: string, method: string) => string;

  constructor(deps: ProviderDeps, timing: RetryTiming = {}, wire?: GeminiWire) {
    this.id = deps.config.id;
    this.#deps = deps;
    const headers: Record<string, string> = {};
    if (deps.apiKey) headers["x-goog-api-key"] = deps.apiKey;
    this.#upstream = new Upstream(
      deps,
      wire?.style ?? {
        headers,
        parseError: parseGeminiError,
        mapError: (status, detail) => mapGeminiError(this.id, status, detail),
      },
      timing,
    );
    this.#path = wire?.path ?? modelPath;
    this.#forwarder = new GeminiForwarder(
      this.#upstream,
      this.#path,
      (data) => mapStreamError(this.id, streamErrorDetail(data), deps.apiKey),
    );
  }

  passthrough(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    return this.#forwarder.forward(call, ctx);
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const body = toGeminiRequest(req, ctx.dropped, ctx.upstreamModel);
    const path = this.#path(ctx.upstreamModel, "generateContent");
    const data = await this.#upstream.json(chatPost(ctx, path, body, false));
    return fromGeminiResponse(data, ctx.requestId);
  }

  /** `batchEmbedContents`; see embeddings.ts. */
  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    return geminiEmbed(this.#upstream, req, ctx);
  }

  /** `GET /v1beta/models`, every page; see model_lists.ts. */
  listModels(signal: AbortSignal): Promise<ListedModel[]> {
    return listGeminiModels(this.#upstream, signal);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    const translator = new GeminiStreamTranslator(ctx.requestId);
    return new EventBatches<SseEvent>(() => {
      const body = toGeminiRequest(req, ctx.dropped, ctx.upstreamModel);
      const path = this.#path(ctx.upstreamModel, "streamGenerateContent?alt=sse");
      return this.#upstream.call(chatPost(ctx, path, body, true));
    }, this.#translation(translator));
  }

  /** What a stream's batches do with its events. (Made apart from {@link chatStream}, so that
   * they do not keep the request, the whole prompt, as long as the stream: V8 keeps the
   * variables that a function's closures use together.) */
  #translation(translator: GeminiStreamTranslator): EventTranslation<SseEvent> {
    return {
      push: (event, out) => {
        const data = parseEventData(event.data);
        if (data.error !== undefined) {
          throw mapStreamError(this.id, streamErrorDetail(data), this.#deps.apiKey);
        }
        translator.push(data, out);
        return false;
      },
      end: () => translator.end(),
    };
  }
}

/** A mid-stream error's detail, `RESOURCE_EXHAUSTED` read as the rate limit it is. */
function streamErrorDetail(data: unknown): UpstreamErrorDetail {
  const detail = parseGeminiError(data);
  return detail.type === "RESOURCE_EXHAUSTED" ? { ...detail, code: "rate_limit_exceeded" } : detail;
}
