/**
 * The Responses protocol's side of a chat call (`api/shared/model_call.ts`): passed through to
 * an upstream with the Responses API (passthrough.ts), or answered through the canonical model
 * by any provider: the previous response's history and this input as canonical messages (after
 * the `instructions`, which are not carried over from the previous response, as OpenAI's), the
 * result or stream rendered as a Response or its events, and the turn stored before the client
 * hears that it completed (so that a `previous_response_id` sent right after finds it). Hosted
 * tools (`web_search`...), which only an upstream with the Responses API runs, are not in the
 * canonical request (`callChat` names them as dropped, or refuses them: `hosted_tools`).
 */
import type { CanonicalRequest, Message, Part } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult, Usage } from "../../canonical/result.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { Provider } from "../../providers/types.ts";
import { Reader } from "../../validation/reader.ts";
import { decodeImages, type PendingImages } from "../shared/images.ts";
import type { ChatDoor, ModelTarget } from "../shared/model_call.ts";
import { ResultCollector } from "../../canonical/result_collector.ts";
import { parseHistory, parseInput } from "./input.ts";
import { endingOf, renderOutput, renderResponse, type ResponseHead, responseId } from "./output.ts";
import { passThrough } from "./passthrough.ts";
import type { ResponsesRequest } from "./request.ts";
import { ResponsesStreamRenderer } from "./stream.ts";
import { ownerOf, ResponseStore, type StoredResponse } from "./store.ts";
import { inputItems, keep, type Turn } from "./turn.ts";
import { responsesUses } from "./uses.ts";
import type { WireObject } from "./output.ts";

/** The protocol, as capability refusals name it. */
const PROTOCOL = "the Responses API";

/** One `POST /v1/responses` on its way through the model-call path. */
export class ResponsesDoor implements ChatDoor {
  readonly name = "responses";
  readonly stream: boolean;
  readonly needs;
  readonly passthrough;
  readonly #ctx: RequestContext;
  readonly #req: ResponsesRequest;
  /** Loads the response `previous_response_id` names (404 when the caller has none such). */
  readonly #previous: (id: string) => Promise<StoredResponse>;
  #turn: Turn | null = null;
  #head: ResponseHead | null = null;
  #items: WireObject[] = [];
  readonly #collector = new ResultCollector();

  constructor(
    ctx: RequestContext,
    req: ResponsesRequest,
    previous: (id: string) => Promise<StoredResponse>,
  ) {
    this.#ctx = ctx;
    this.#req = req;
    this.#previous = previous;
    this.stream = req.stream;
    const uses = responsesUses(req);
    this.needs = { tools: req.options.tools.length, uses, protocol: PROTOCOL };
    this.passthrough = {
      speaks: (provider: Provider) => provider.passes?.has("openai_responses") ?? false,
      answer: async (target: ModelTarget) =>
        passThrough(
          await this.#turnOf(target),
          target.provider.passthrough!.bind(target.provider),
        ),
    };
  }

  /** The turn, its previous response loaded (after the capability check, as OpenAI's order). */
  async #turnOf({ record, call }: ModelTarget): Promise<Turn> {
    const ctx = this.#ctx;
    const req = this.#req;
    const previous = req.previousResponseId === null
      ? null
      : await this.#previous(req.previousResponseId);
    const store = new ResponseStore(ctx.services.kv);
    return { ctx, req, record, call, previous, store, owner: ownerOf(ctx.principal) };
  }

  async canonical(target: ModelTarget): Promise<CanonicalRequest> {
    const turn = await this.#turnOf(target);
    this.#turn = turn;
    const { req, ctx } = turn;
    const { config, clock } = ctx.services;
    const pending: PendingImages = { fields: [], parts: [] };
    const history = turn.previous === null
      ? []
      : parseHistory(new Reader(turn.previous.history, null, "history", true), pending, req.tools);
    const input = parseInput(req.input, history, pending, req.tools);
    decodeImages(pending, config.limits);
    if (input.unanswered !== null) throw input.unanswered;
    const messages: Message[] = [];
    if (req.instructions !== null) {
      messages.push({ role: "system", parts: [{ type: "text", text: req.instructions }] });
    }
    messages.push(...history, ...input.messages);
    this.#head = {
      id: responseId(),
      createdAt: Math.floor(clock.now() / 1000),
      model: target.record.id,
      previousResponseId: req.previousResponseId,
      store: req.store,
      echo: req.echo,
      tools: req.tools,
    };
    this.#items = inputItems(req.input.value);
    return {
      model: req.model,
      messages,
      options: req.options,
      stream: req.stream,
      includeUsage: true,
      extras: { protocol: "openai_responses", fields: req.extras },
    };
  }

  async answer(result: CanonicalResult): Promise<unknown> {
    return await this.#finished(result.finish, result.parts, result.usage);
  }

  renderer(): ResponsesStreamRenderer {
    const clock = this.#ctx.services.clock;
    return new ResponsesStreamRenderer(
      this.#head!,
      this.#req.includeEncrypted,
      this.#collector,
      () => clock.now(),
    );
  }

  events(events: AsyncIterable<CanonicalEvent[]>): AsyncIterable<CanonicalEvent[]> {
    const collector = this.#collector;
    return storedAtFinish(events, collector, async () => {
      await this.#finished(collector.finish ?? "stop", collector.parts, collector.usage);
    });
  }

  logged(parts: readonly Part[]): unknown {
    return renderOutput(parts, this.#head!.id, this.#req.tools, false);
  }

  /** The Response for the answer's parts, stored (when asked) with every reasoning item's
   * encrypted content, whatever the client is shown. */
  async #finished(
    finish: CanonicalResult["finish"],
    parts: readonly Part[],
    usage: Usage | null,
  ): Promise<WireObject> {
    const head = this.#head!;
    const clock = this.#ctx.services.clock;
    const ending = endingOf(finish, parts);
    ending.completedAt = Math.floor(clock.now() / 1000);
    const incomplete = ending.status === "incomplete";
    const tools = this.#req.tools;
    const shown = renderOutput(parts, head.id, tools, this.#req.includeEncrypted, incomplete);
    const response = renderResponse(head, ending, shown, usage);
    const stored = renderOutput(parts, head.id, tools, true, incomplete);
    await keep(this.#turn!, response, this.#items, stored);
    return response;
  }
}

/** The batches as they come, each added to `collector` first; the batch that finishes the
 * answer waits for `finished` (the store) before it is handed on. */
async function* storedAtFinish(
  batches: AsyncIterable<CanonicalEvent[]>,
  collector: ResultCollector,
  finished: () => Promise<void>,
): AsyncGenerator<CanonicalEvent[]> {
  for await (const batch of batches) {
    collector.add(batch);
    if (batch.some((e) => e.type === "finish")) await finished();
    yield batch;
  }
}
