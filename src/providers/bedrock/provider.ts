import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { EventBatches, type EventTranslation } from "../event_batches.ts";
import type { CallContext, ListedModel, Provider, ProviderDeps } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { UpstreamErrorDetail } from "../upstream/error_detail.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { Upstream } from "../upstream/upstream.ts";
import { malformed, parseEventData } from "../wire.ts";
import { countBedrockTokens } from "./count_tokens.ts";
import { awsCredentials, fixedCredentials, RoleCredentials } from "./credentials.ts";
import { bedrockEmbed } from "./embeddings.ts";
import { mapBedrockError, mapBedrockStreamException, parseBedrockError } from "./errors.ts";
import { EventStreamSource } from "./event_source.ts";
import type { EventMessage } from "./event_stream.ts";
import { listBedrockModels } from "./model_list.ts";
import { bedrockModelPath } from "./model_path.ts";
import { toConverseRequest } from "./request.ts";
import { fromConverseResponse } from "./response.ts";
import { SigningClient } from "./signing_client.ts";
import { ConverseStreamTranslator } from "./stream.ts";

const utf8 = new TextDecoder();

/**
 * The adapter for Amazon Bedrock's Converse API (`/model/{modelId}/converse`,
 * `/converse-stream` with AWS's binary event stream), `CountTokens` and, for embeddings,
 * `InvokeModel`; every
 * request signed with AWS Signature Version 4 for the provider's region (service `bedrock`),
 * or, with a Bedrock API key (`api_key_env`), carrying it as a bearer token.
 * The request is translated before the upstream call (a 400 for what cannot be sent,
 * `ctx.dropped` filled): for a stream, when its first batch is asked for.
 */
export class BedrockProvider implements Provider {
  readonly id: string;
  readonly #deps: ProviderDeps;
  readonly #upstream: Upstream;
  /** The control plane (`control_url`), where the models are listed. */
  readonly #control: Upstream;

  /** Throws when neither a Bedrock API key nor the AWS keys are there (the registry leaves
   * such a provider disabled before it gets here). */
  constructor(deps: ProviderDeps, timing: RetryTiming = {}) {
    this.id = deps.config.id;
    const bedrock = deps.config.bedrock;
    if (bedrock === undefined) throw new Error(`provider "${this.id}" is not of style bedrock`);
    const headers: Record<string, string> = {};
    if (deps.apiKey) {
      // A Bedrock API key: a bearer token instead of a signature.
      headers.authorization = `Bearer ${deps.apiKey}`;
      this.#deps = deps;
    } else {
      const found = awsCredentials(bedrock, deps.env ?? (() => undefined));
      if ("missing" in found) {
        throw new Error(`provider "${this.id}" has no AWS credentials: ${found.missing}`);
      }
      const credentials = "role" in found
        ? new RoleCredentials(this.id, found.role, deps.http, deps.clock)
        : fixedCredentials(found);
      const http = new SigningClient(deps.http, {
        credentials,
        region: bedrock.region,
        service: "bedrock",
        clock: deps.clock,
      });
      this.#deps = { ...deps, http };
    }
    const style = {
      headers,
      parseError: parseBedrockError,
      mapError: (status: number, detail: UpstreamErrorDetail) =>
        mapBedrockError(this.id, status, detail),
    };
    this.#upstream = new Upstream(this.#deps, style, timing);
    const control = { ...this.#deps.config, base_url: bedrock.control_url };
    this.#control = new Upstream({ ...this.#deps, config: control }, style, timing);
  }

  /** `ListFoundationModels` and `ListInferenceProfiles`; see model_list.ts. */
  listModels(signal: AbortSignal): Promise<ListedModel[]> {
    return listBedrockModels(this.#control, signal);
  }

  async chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const call = toConverseRequest(req, ctx.upstreamModel, ctx.dropped);
    const path = bedrockModelPath(ctx.upstreamModel, "converse");
    const data = await this.#upstream.json(chatPost(ctx, path, call.body, false));
    return fromConverseResponse(data, call.jsonTool);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    // Made with the request, which says whether the forced JSON tool answers.
    const made: { translator: ConverseStreamTranslator | null } = { translator: null };
    const maxEventBytes = this.#deps.config.max_event_bytes;
    return new EventBatches<EventMessage>(async () => {
      const call = toConverseRequest(req, ctx.upstreamModel, ctx.dropped);
      made.translator = new ConverseStreamTranslator(call.jsonTool);
      const path = bedrockModelPath(ctx.upstreamModel, "converse-stream");
      const response = await this.#upstream.call(chatPost(ctx, path, call.body, true));
      return new EventStreamSource(response, maxEventBytes);
    }, this.#translation(made));
  }

  /** `CountTokens` (count_tokens, Gemini's countTokens); see count_tokens.ts. */
  countTokens(req: CanonicalRequest, ctx: CallContext): Promise<number> {
    return countBedrockTokens(this.#upstream, req, ctx);
  }

  /** `InvokeModel` with Titan's or Cohere's body; see embeddings.ts. */
  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    return bedrockEmbed(this.#upstream, req, ctx);
  }

  /** What a stream's batches do with its messages. (Made apart from {@link chatStream}, so
   * that they do not keep the request, the whole prompt, as long as the stream.) */
  #translation(
    made: { translator: ConverseStreamTranslator | null },
  ): EventTranslation<EventMessage> {
    return {
      push: (message, out) => {
        const kind = message.headers[":message-type"];
        if (kind === "exception") {
          const type = String(message.headers[":exception-type"] ?? "exception");
          throw mapBedrockStreamException(this.id, type, payloadOf(message, true));
        }
        if (kind === "error") {
          const code = String(message.headers[":error-code"] ?? "error");
          const said = message.headers[":error-message"];
          throw mapBedrockStreamException(this.id, code, { message: said ?? null });
        }
        if (kind !== "event") throw malformed("stream (a message that is not an event)");
        const type = message.headers[":event-type"];
        if (typeof type !== "string") throw malformed("stream (an event without :event-type)");
        return made.translator!.push(
          type,
          payloadOf(message, false) as Record<string, unknown>,
          out,
        );
      },
      end: () => made.translator!.end(),
    };
  }
}

/** A message's JSON payload (for an exception, its text when it is not JSON). */
function payloadOf(message: EventMessage, lenient: boolean): unknown {
  const text = utf8.decode(message.payload);
  if (!lenient) return parseEventData(text);
  try {
    return JSON.parse(text);
  } catch {
    return text === "" ? null : { message: text };
  }
}
