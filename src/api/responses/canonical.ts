/**
 * A Responses request answered through the canonical model, by any provider: the previous
 * response's history and this input as canonical messages (after the `instructions`, which
 * are not carried over from the previous response, as OpenAI's), the provider's result or
 * stream rendered as a Response or its events, and the turn stored before the client hears
 * that it completed (so that a `previous_response_id` sent right after finds it).
 */
import type { CanonicalRequest, Message } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import { unsupportedCapability } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { Provider } from "../../providers/types.ts";
import { Reader } from "../../validation/reader.ts";
import { decodeImages, type PendingImages } from "../shared/images.ts";
import { loggedMessages } from "../shared/log_content.ts";
import { DEFAULT_MAX_TOKENS } from "../../canonical/conversation.ts";
import { followed, streamAnswer, untilClientLeaves, withDropped } from "../shared/model_call.ts";
import { ResultCollector } from "./collect.ts";
import { type InputUses, parseHistory, parseInput } from "./input.ts";
import { endingOf, renderOutput, renderResponse, type ResponseHead, responseId } from "./output.ts";
import { ResponsesStreamRenderer } from "./stream.ts";
import { inputItems, keep, type Turn } from "./turn.ts";

/** Answers the turn with `provider`'s chat or chat stream. */
export async function answerCanonically(turn: Turn, provider: Provider): Promise<Response> {
  const { ctx, req, record, call } = turn;
  const { config, clock } = ctx.services;
  const pending: PendingImages = { fields: [], parts: [] };
  const history = turn.previous === null
    ? []
    : parseHistory(new Reader(turn.previous.history, null, "history", true), pending);
  const input = parseInput(req.input, history, pending);
  decodeImages(pending, config.limits);
  checkInputUses(input.uses, record.id, record.image_input, record.function_calling);
  if (input.unanswered !== null) throw input.unanswered;
  const messages: Message[] = [];
  if (req.instructions !== null) {
    messages.push({ role: "system", parts: [{ type: "text", text: req.instructions }] });
  }
  messages.push(...history, ...input.messages);
  if (!req.options.maxTokensGiven) {
    req.options.maxTokens = record.default_max_tokens ?? DEFAULT_MAX_TOKENS;
  }
  const canonical: CanonicalRequest = {
    model: req.model,
    messages,
    options: req.options,
    stream: req.stream,
    includeUsage: true,
    extras: { protocol: "openai_responses", fields: req.extras },
  };
  const head: ResponseHead = {
    id: responseId(),
    createdAt: Math.floor(clock.now() / 1000),
    model: record.id,
    previousResponseId: req.previousResponseId,
    store: req.store,
    echo: req.echo,
  };
  const items = inputItems(req.input.value);
  const content = config.logs.include_content
    ? { messages: loggedMessages(messages), output: [] as unknown[] }
    : null;
  if (content) ctx.content = content;

  if (!req.stream) {
    const result = await untilClientLeaves(ctx, () => provider.chat(canonical, call));
    ctx.usage = result.usage;
    const ending = endingOf(result.finish, result.parts);
    ending.completedAt = Math.floor(clock.now() / 1000);
    const incomplete = ending.status === "incomplete";
    const output = renderOutput(result.parts, head.id, req.includeEncrypted, incomplete);
    const response = renderResponse(head, ending, output, result.usage);
    if (content) content.output = output;
    await keep(turn, response, items, renderOutput(result.parts, head.id, true, incomplete));
    return withDropped(json(response), call);
  }

  ctx.stream = true;
  const abort = new AbortController();
  call.signal = followed(abort, ctx.signal);
  const collector = new ResultCollector();
  const renderer = new ResponsesStreamRenderer(
    head,
    req.includeEncrypted,
    collector,
    () => clock.now(),
  );
  const batches = storedAtFinish(provider.chatStream(canonical, call), collector, async () => {
    const ending = endingOf(collector.finish ?? "stop", collector.parts);
    const incomplete = ending.status === "incomplete";
    ending.completedAt = Math.floor(clock.now() / 1000);
    const shown = renderOutput(collector.parts, head.id, req.includeEncrypted, incomplete);
    const response = renderResponse(head, ending, shown, collector.usage);
    await keep(turn, response, items, renderOutput(collector.parts, head.id, true, incomplete));
  });
  const response = await streamAnswer(ctx, batches, renderer, {
    abort,
    signal: call.signal,
    name: "responses",
    ended() {
      if (content) content.output = renderOutput(collector.parts, head.id, false);
    },
  });
  return withDropped(response, call);
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

/** The model's capabilities against the input (as the chat endpoint checks them). */
function checkInputUses(
  uses: InputUses,
  id: string,
  imageInput: boolean,
  functionCalling: boolean,
): void {
  if (!imageInput && uses.image !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` does not accept image input; send text only or use a model with image_input.`,
      uses.image,
    );
  }
  if (!functionCalling && uses.toolItem !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` does not support function calling (tools).`,
      uses.toolItem,
    );
  }
}
