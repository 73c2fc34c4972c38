import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { SseEvent } from "../../http/sse.ts";
import { AnthropicForwarder } from "./passthrough.ts";
import { ANTHROPIC_PLACE, type MessagesPlace } from "./place.ts";
import { toAnthropicRequest } from "./request.ts";
import { fromAnthropicMessage } from "./response.ts";
import { AnthropicStreamTranslator } from "./stream.ts";
import { EventBatches, type EventTranslation } from "../event_batches.ts";
import { listAnthropicModels } from "../model_lists.ts";
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
import { isObject, malformed, parseEventData } from "../wire.ts";

/** Reads an Anthropic error body (`{"type":"error","error":{"type","message"}}`). Anthropic
 * has no error codes beside the type, which is its machine-readable kind: it is the code too,
 * so that an upstream 400 passed on to the caller has one (DESIGN §7). */
export function parseAnthropicError(body: unknown): UpstreamErrorDetail {
  const detail: UpstreamErrorDetail = { message: null, type: null, code: null, param: null };
  if (!isObject(body) || !isObject(body.error)) return detail;
  if (typeof body.error.message === "string") detail.message = body.error.message;
  if (typeof body.error.type === "string") detail.type = detail.code = body.error.type;
  return detail;
}

/** What a style on the Messages API's wire format at other URLs with other auth (Vertex AI)
 * gives the adapter. */
export interface AnthropicWire {
  /** How its upstream is called (in place of `x-api-key` + `anthropic-version` on `base_url`). */
  style: UpstreamStyle;
  /** Where a Messages body (`model` the upstream's) goes, and the body it goes as. */
  place: MessagesPlace;
}

/** What an Anthropic upstream takes as written. */
const MESSAGES_ONLY: ReadonlySet<PassProtocol> = new Set(["anthropic_messages"]);

/**
 * The adapter for Anthropic's Messages API (`x-api-key` + `anthropic-version`). The request is
 * translated before the upstream call (a 400 for what cannot be sent, `ctx.dropped` filled):
 * for a stream, when its first batch is asked for.
 */
export class AnthropicProvider implements Provider {
  readonly id: string;
  readonly #deps: ProviderDeps;
  readonly #upstream: Upstream;
  readonly #forwarder: AnthropicForwarder;
  readonly #place: MessagesPlace;

  constructor(deps: ProviderDeps, timing: RetryTiming = {}, wire?: AnthropicWire) {
    this.id = deps.config.id;
    this.#deps = deps;
    const headers: Record<string, string> = {
      "anthropic-version": deps.config.anthropic_version,
    };
    if (deps.apiKey) headers["x-api-key"] = deps.apiKey;
    const style = wire?.style ?? { headers, parseError: parseAnthropicError };
    this.#place = wire?.place ?? ANTHROPIC_PLACE;
    this.#upstream = new Upstream(deps, style, timing);
    this.#forwarder = new AnthropicForwarder(
      deps,
      style,
      (data) => mapStreamError(this.id, parseAnthropicError(data), deps.apiKey),
      timing,
      this.#place,
    );
  }

  /** Messages API calls as the client wrote them (see passthrough.ts). */
  readonly passes: ReadonlySet<PassProtocol> = MESSAGES_ONLY;

  passthrough(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    return this.#forwarder.forward(call, ctx);
  }

  /** `GET /v1/models`, every page; see model_lists.ts. */
  listModels(signal: AbortSignal): Promise<ListedModel[]> {
    return listAnthropicModels(this.#upstream, signal);
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const call = toAnthropicRequest(req, ctx.upstreamModel, false, ctx.dropped);
    const { path, body } = this.#place("messages", { ...call.body });
    const data = await this.#upstream.json(chatPost(ctx, path, body, false));
    return fromAnthropicMessage(data, call.jsonTool);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    // Made with the request, which says whether the forced JSON tool answers.
    const made: { translator: AnthropicStreamTranslator | null } = { translator: null };
    return new EventBatches<SseEvent>(() => {
      const call = toAnthropicRequest(req, ctx.upstreamModel, true, ctx.dropped);
      made.translator = new AnthropicStreamTranslator(call.jsonTool);
      const { path, body } = this.#place("messages", { ...call.body });
      return this.#upstream.call(chatPost(ctx, path, body, true));
    }, this.#translation(made));
  }

  /** What a stream's batches do with its events. (Made apart from {@link chatStream}, so that
   * they do not keep the request, the whole prompt, as long as the stream: V8 keeps the
   * variables that a function's closures use together.) */
  #translation(
    made: { translator: AnthropicStreamTranslator | null },
  ): EventTranslation<SseEvent> {
    return {
      push: (event, out) => {
        const data = parseEventData(event.data);
        if (event.event === "error" || data.type === "error") {
          throw mapStreamError(this.id, parseAnthropicError(data), this.#deps.apiKey);
        }
        return made.translator!.push(data, out);
      },
      end: () => {
        throw malformed("stream: it ended before message_stop");
      },
    };
  }
}
