import type { ChatChunk, ChatCompletion, ChatRequest } from "../types/openai.ts";
import { toAnthropicRequest } from "./anthropic_request.ts";
import { fromAnthropicMessage } from "./anthropic_response.ts";
import { AnthropicStreamTranslator } from "./anthropic_stream.ts";
import type { SseEvent } from "../http/sse.ts";
import { ChunkBatches, flattenBatches } from "./chunks.ts";
import type { CallContext, Provider, ProviderDeps } from "./types.ts";
import {
  chatPost,
  mapStreamError,
  type RetryTiming,
  Upstream,
  type UpstreamErrorDetail,
  type UpstreamRequest,
} from "./upstream.ts";
import { isObject, malformed, parseEventData } from "./wire.ts";

/** Reads an Anthropic error body (`{"type":"error","error":{"type","message"}}`). */
export function parseAnthropicError(body: unknown): UpstreamErrorDetail {
  const detail: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };
  if (!isObject(body) || !isObject(body.error)) return detail;
  if (typeof body.error.message === "string") detail.message = body.error.message;
  if (typeof body.error.type === "string") detail.type = body.error.type;
  return detail;
}

/** The adapter for Anthropic's Messages API (`x-api-key` + `anthropic-version`). */
export class AnthropicProvider implements Provider {
  readonly id: string;
  readonly #deps: ProviderDeps;
  readonly #upstream: Upstream;

  constructor(deps: ProviderDeps, timing: RetryTiming = {}) {
    this.id = deps.config.id;
    this.#deps = deps;
    const headers: Record<string, string> = {
      "anthropic-version": deps.config.anthropic_version,
    };
    if (deps.apiKey) headers["x-api-key"] = deps.apiKey;
    this.#upstream = new Upstream(deps, { headers, parseError: parseAnthropicError }, timing);
  }

  async chat(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
    const data = await this.#upstream.json(this.#request(req, ctx, false));
    return fromAnthropicMessage(data, ctx.model.id, this.#deps.clock.now());
  }

  chatStream(req: ChatRequest, ctx: CallContext): AsyncIterable<ChatChunk> {
    return flattenBatches(this.chatStreamBatches(req, ctx));
  }

  chatStreamBatches(req: ChatRequest, ctx: CallContext): ChunkBatches<SseEvent> {
    const translator = new AnthropicStreamTranslator(ctx.model.id, this.#deps.clock.now());
    const call = () => this.#upstream.call(this.#request(req, ctx, true));
    return new ChunkBatches(call, {
      push: (event, out) => {
        const data = parseEventData(event.data);
        if (event.event === "error" || data.type === "error") {
          throw mapStreamError(this.id, parseAnthropicError(data), this.#deps.apiKey);
        }
        for (const chunk of translator.push(data)) out.push(chunk);
        return translator.done;
      },
      end: () => {
        throw malformed("stream: it ended before message_stop");
      },
    });
  }

  #request(req: ChatRequest, ctx: CallContext, stream: boolean): UpstreamRequest {
    return chatPost(
      ctx,
      "/v1/messages",
      toAnthropicRequest(req, ctx.upstreamModel, stream),
      stream,
    );
  }
}
