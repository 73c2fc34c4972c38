import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ModerationRequest,
  ModerationResult,
} from "../../types/openai.ts";
import type { RerankRequest, RerankResult } from "../../types/rerank.ts";
import type { CallContext, Provider, ProviderDeps } from "../types.ts";
import { simulateChat, simulateChatStream } from "./chat.ts";
import { simulateEmbeddings } from "./embeddings.ts";
import { simulateRerank } from "./rerank.ts";
import { renderImages } from "./images.ts";
import { classify, type CompiledLexicon, compileSimulatorLexicon } from "./moderation.ts";
import type { SimulatorOptions } from "./options.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";

/** The built-in simulator: deterministic chat, moderation, embeddings, rerank and images with
 * no network. */
export class SimulatorProvider implements Provider {
  readonly id: string;
  readonly #options: SimulatorOptions;
  /** The moderation lexicon, compiled on the first moderation request. */
  #lexicon: CompiledLexicon | null = null;

  constructor(deps: ProviderDeps) {
    this.id = deps.config.id;
    this.#options = { tokenDelayMs: deps.config.token_delay_ms, images: deps.images };
  }

  chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    return simulateChat(req, ctx, this.#options);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    return simulateChatStream(req, ctx, this.#options);
  }

  /** Exact: the count its answers report as input usage. */
  countTokens(req: CanonicalRequest): Promise<number> {
    return Promise.resolve(promptTokens(req));
  }

  moderate(req: ModerationRequest, ctx: CallContext): Promise<ModerationResult[]> {
    this.#lexicon ??= compileSimulatorLexicon();
    return classify(this.#lexicon, req, ctx);
  }

  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    return simulateEmbeddings(req, ctx);
  }

  rerank(req: RerankRequest, ctx: CallContext): Promise<RerankResult> {
    return simulateRerank(req, ctx);
  }

  generateImages(req: ImageRequest, ctx: CallContext): Promise<string[]> {
    return renderImages(req, ctx, this.#options.images);
  }
}
