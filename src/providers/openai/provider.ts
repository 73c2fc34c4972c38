import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { SseEvent } from "../../http/sse.ts";
import type { RerankRequest, RerankResult } from "../../types/rerank.ts";
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ModerationRequest,
  ModerationResult,
} from "../../types/openai.ts";
import { EventBatches, type EventTranslation } from "../event_batches.ts";
import { openAIEmbed } from "./embeddings.ts";
import { openAIRerank } from "./rerank.ts";
import { openAIGenerateImages } from "./images.ts";
import { listOpenAIModels } from "../model_lists.ts";
import { openAIModerate } from "./moderation.ts";
import { fromOpenAICompletion } from "./response.ts";
import { toOpenAIRequest } from "./request.ts";
import { OpenAIStreamTranslator } from "./stream.ts";
import { passResponses } from "./responses.ts";
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
import { chatPost, type UpstreamRequest } from "../upstream/request.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { Upstream, type UpstreamStyle } from "../upstream/upstream.ts";
import { isObject, malformed, parseEventData } from "../wire.ts";

/** What an OpenAI-style upstream with `responses_api` takes as written; without it, nothing. */
const RESPONSES_ONLY: ReadonlySet<PassProtocol> = new Set(["openai_responses"]);
const NOTHING: ReadonlySet<PassProtocol> = new Set();

/** Reads an OpenAI-style error body, and the variants compatible servers write
 * (`{"error": "text"}` from Ollama, `{"detail": ...}` from FastAPI-based servers). */
export function parseOpenAIError(body: unknown): UpstreamErrorDetail {
  const detail: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };
  if (!isObject(body)) return detail;
  const error = body.error;
  if (isObject(error)) {
    if (typeof error.message === "string") detail.message = error.message;
    if (typeof error.type === "string") detail.type = error.type;
    if (typeof error.code === "string" || typeof error.code === "number") {
      detail.code = String(error.code);
    }
    if (typeof error.param === "string") detail.param = error.param;
  } else if (typeof error === "string") {
    detail.message = error;
  } else if (typeof body.detail === "string") {
    detail.message = body.detail;
  } else if (Array.isArray(body.detail)) {
    detail.message = body.detail
      .map((d) => isObject(d) && typeof d.msg === "string" ? d.msg : JSON.stringify(d))
      .join("; ");
  } else if (typeof body.message === "string") {
    detail.message = body.message;
  }
  return detail;
}

/** What a style on OpenAI's wire format with other URLs and auth (Azure) gives the adapter. */
export interface OpenAIWire {
  /** How its upstream is called (in place of a bearer key on `base_url` + path). */
  style: UpstreamStyle;
  /** The field the output limit goes in. */
  maxTokensField: "max_tokens" | "max_completion_tokens";
}

/** The adapter for any OpenAI-compatible `base_url` (OpenAI, Groq, Together, Mistral,
 * OpenRouter, vLLM, Ollama, llama.cpp server), and for Azure's (given its {@link OpenAIWire}). */
export class OpenAIProvider implements Provider {
  readonly id: string;
  readonly #deps: ProviderDeps;
  readonly #upstream: Upstream;
  readonly #maxTokensField: "max_tokens" | "max_completion_tokens";
  /** The Responses API, when the provider has `responses_api` (see responses.ts). */
  readonly passes: ReadonlySet<PassProtocol>;

  constructor(deps: ProviderDeps, timing: RetryTiming = {}, wire?: OpenAIWire) {
    this.id = deps.config.id;
    this.#deps = deps;
    const headers: Record<string, string> = {};
    if (deps.apiKey) headers.authorization = `Bearer ${deps.apiKey}`;
    const style = wire?.style ?? { headers, parseError: parseOpenAIError };
    this.#upstream = new Upstream(deps, style, timing);
    this.#maxTokensField = wire?.maxTokensField ??
      (new URL(deps.config.base_url).hostname === "api.openai.com"
        ? "max_completion_tokens"
        : "max_tokens");
    this.passes = deps.config.responses_api ? RESPONSES_ONLY : NOTHING;
  }

  passthrough(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    if (!this.passes.has(call.protocol)) {
      return Promise.reject(
        new Error(`provider ${this.id} does not pass ${call.protocol} through`),
      );
    }
    return passResponses(this.#upstream, call, ctx);
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const data = await this.#upstream.json(this.#request(req, ctx, false));
    return fromOpenAICompletion(data);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): EventBatches<SseEvent> {
    const translator = new OpenAIStreamTranslator();
    // The request is translated now, so that `ctx.dropped` is complete before the first read.
    const request = this.#request(req, ctx, true);
    return new EventBatches(() => this.#upstream.call(request), this.#translation(translator));
  }

  /** What a stream's batches do with its events. (Made apart from {@link chatStream}: V8 keeps
   * the variables that a function's closures use together, so push and end made there would keep
   * the upstream request, the whole prompt, as long as the stream.) */
  #translation(translator: OpenAIStreamTranslator): EventTranslation<SseEvent> {
    return {
      push: (event, out) => {
        if (event.data === "[DONE]") {
          for (const e of translator.end()) out.push(e);
          return true;
        }
        if (event.event !== "error" && translator.pushText(event.data, out)) return false;
        const data = parseEventData(event.data);
        if (event.event === "error" || data.error !== undefined) {
          throw mapStreamError(this.id, parseOpenAIError(data), this.#deps.apiKey);
        }
        translator.push(data, out);
        return false;
      },
      end: (): CanonicalEvent[] => {
        if (!translator.finished) {
          throw malformed("stream: it ended before the completion was finished");
        }
        return translator.end();
      },
    };
  }

  #request(req: CanonicalRequest, ctx: CallContext, stream: boolean): UpstreamRequest {
    const { body, dropped } = toOpenAIRequest(req, {
      upstreamModel: ctx.upstreamModel,
      stream,
      maxTokensField: this.#maxTokensField,
    });
    for (const name of dropped) ctx.dropped.add(name);
    return chatPost(ctx, "/chat/completions", body, stream);
  }

  /** `GET /models`; see model_lists.ts. */
  listModels(signal: AbortSignal): Promise<ListedModel[]> {
    return listOpenAIModels(this.#upstream, signal);
  }

  /** `POST /moderations`; see moderation.ts. */
  moderate(req: ModerationRequest, ctx: CallContext): Promise<ModerationResult[]> {
    return openAIModerate(this.#upstream, req, ctx);
  }

  /** `POST /embeddings`; see embeddings.ts. */
  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    return openAIEmbed(this.#upstream, req, ctx);
  }

  /** `POST {rerank_path}`; see rerank.ts. */
  rerank(req: RerankRequest, ctx: CallContext): Promise<RerankResult> {
    const { rerank_path: path, rerank_format: format } = this.#deps.config;
    return openAIRerank(this.#upstream, path, format, req, ctx);
  }

  /** `POST /images/generations`; see images.ts. */
  generateImages(req: ImageRequest, ctx: CallContext): Promise<string[]> {
    return openAIGenerateImages(this.#upstream, req, ctx, this.#deps.images);
  }
}
