/**
 * `POST /v1/chat/completions` (spec §4.2): the body parsed into a canonical request, answered
 * through the one model-call path (`api/shared/model_call.ts`) as a chat completion or an SSE
 * stream of chunks. Request fields the back end left out are named in
 * `x-switchyard-dropped-params`.
 */
import type { CanonicalRequest, Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { HeldRequest } from "../shared/held_request.ts";
import { callChat, type ChatDoor, type ModelTarget, openModel } from "../shared/model_call.ts";
import { reasoningExcluded } from "./reasoning.ts";
import { parseChatRequest } from "./request.ts";
import { completionId, renderCompletion, renderMessage } from "./response.ts";
import { ChatChunkRenderer } from "./stream.ts";
import { chatUses } from "./uses.ts";

/** The chat completions handler. */
export function createChatCompletion(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const body = ctx.takeBody();
  const req = parseChatRequest(body, config.limits);
  const door = new ChatCompletionsDoor(ctx, req, reasoningExcluded(body));
  return callChat(ctx, openModel(ctx, req.model), door);
}

/** The chat completions protocol's side of a chat call. */
class ChatCompletionsDoor implements ChatDoor {
  readonly name = "chat";
  readonly stream: boolean;
  readonly needs;
  readonly #ctx: RequestContext;
  readonly #excludeReasoning: boolean;
  readonly #created: number;
  readonly #req: HeldRequest;

  constructor(ctx: RequestContext, req: CanonicalRequest, excludeReasoning: boolean) {
    this.#ctx = ctx;
    this.#req = new HeldRequest(req);
    this.stream = req.stream;
    this.needs = {
      tools: req.options.tools.length,
      uses: chatUses(req),
      protocol: "chat completions",
    };
    this.#excludeReasoning = excludeReasoning;
    this.#created = Math.floor(ctx.services.clock.now() / 1000);
  }

  canonical(): CanonicalRequest {
    return this.#req.take();
  }

  answer(result: CanonicalResult, { record }: ModelTarget): unknown {
    return renderCompletion(result, {
      id: completionId(result.id, this.#ctx.requestId),
      created: this.#created,
      model: record.id,
      excludeReasoning: this.#excludeReasoning,
    });
  }

  renderer({ record }: ModelTarget, req: CanonicalRequest): ChatChunkRenderer {
    return new ChatChunkRenderer({
      requestId: this.#ctx.requestId,
      created: this.#created,
      model: record.id,
      includeUsage: req.includeUsage,
      excludeReasoning: this.#excludeReasoning,
    });
  }

  logged(parts: readonly Part[]): unknown {
    return renderMessage(parts, this.#excludeReasoning);
  }
}
