/**
 * `POST /v1/chat/completions` (spec §4.2): validate into a canonical request, resolve the
 * model and its capabilities, call its provider, and answer a chat completion or an SSE stream
 * of chunks. Request fields the back end left out are named in `x-switchyard-dropped-params`.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CallContext, Provider } from "../../providers/types.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { unsupportedCapability } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { resolve } from "../../pipeline/resolve.ts";
import {
  followed,
  modelCall,
  streamAnswer,
  untilClientLeaves,
  withDropped,
} from "../shared/model_call.ts";
import { loggedMessages, StreamedParts } from "../shared/log_content.ts";
import { reasoningExcluded } from "./reasoning.ts";
import { parseChatRequest } from "./request.ts";
import { DEFAULT_MAX_TOKENS } from "../../canonical/conversation.ts";
import { completionId, renderCompletion, renderMessage } from "./response.ts";
import { ChatChunkRenderer } from "./stream.ts";
import type { WireMessage } from "./wire.ts";

/** The chat completions handler. */
export async function createChatCompletion(ctx: RequestContext): Promise<Response> {
  const { config, clock } = ctx.services;
  const body = ctx.takeBody();
  const req = parseChatRequest(body, config.limits);
  const excludeReasoning = reasoningExcluded(body);
  const record = resolve(ctx, req.model);
  checkCapabilities(req, record);
  if (!req.options.maxTokensGiven) {
    // `??` also covers records stored before the field existed.
    req.options.maxTokens = record.default_max_tokens ?? DEFAULT_MAX_TOKENS;
  }
  const { provider, call } = modelCall(ctx, record);
  const created = Math.floor(clock.now() / 1000);
  const content = config.logs.include_content
    ? {
      messages: loggedMessages(req.messages),
      output: { role: "assistant", content: null, refusal: null } as WireMessage,
    }
    : null;
  if (content) ctx.content = content;

  if (!req.stream) {
    const result = await untilClientLeaves(ctx, () => provider.chat(req, call));
    ctx.usage = result.usage;
    const completion = renderCompletion(result, {
      id: completionId(result.id, ctx.requestId),
      created,
      model: record.id,
      excludeReasoning,
    });
    if (content) content.output = completion.choices[0]!.message;
    return withDropped(json(completion), call);
  }

  ctx.stream = true;
  const renderer = new ChatChunkRenderer({
    requestId: ctx.requestId,
    created,
    model: record.id,
    includeUsage: req.includeUsage,
    excludeReasoning,
  });
  return await streamChat(ctx, provider, req, call, renderer, content, excludeReasoning);
}

/** The stream's answer. (A function of its own, whose closures do not use the request: V8 keeps
 * the variables that a function's closures use together, so closures made in the handler would
 * keep the request, the whole prompt, as long as the stream.) */
async function streamChat(
  ctx: RequestContext,
  provider: Provider,
  req: CanonicalRequest,
  call: CallContext,
  renderer: ChatChunkRenderer,
  content: { output: WireMessage } | null,
  excludeReasoning: boolean,
): Promise<Response> {
  // A stream's call also stops when its response body is cancelled (`abort`).
  const abort = new AbortController();
  call.signal = followed(abort, ctx.signal);
  const streamed = content ? new StreamedParts() : null;
  const response = await streamAnswer(ctx, provider.chatStream(req, call), renderer, {
    abort,
    signal: call.signal,
    name: "chat",
    observe: streamed ? (events) => streamed.add(events) : undefined,
    ended() {
      if (content && streamed) content.output = renderMessage(streamed.parts, excludeReasoning);
    },
  });
  return withDropped(response, call);
}

/** The model's capabilities against what the request uses (spec §4.2 rules 4-6): image parts,
 * by URL too, need `image_input`; tools, tool calls and tool messages `function_calling`. */
function checkCapabilities(req: CanonicalRequest, record: ModelRecord): void {
  const id = record.id;
  if (!record.chat_completions) {
    throw unsupportedCapability(`The model \`${id}\` does not support chat completions.`, "model");
  }
  if (!record.image_input) {
    req.messages.forEach((m, i) => {
      // A user message's parts are its content parts, one for one.
      const j = m.parts.findIndex((p) => p.type === "image");
      if (j >= 0) {
        throw unsupportedCapability(
          `The model \`${id}\` does not accept image input; send text only or use a model with image_input.`,
          `messages[${i}].content[${j}]`,
        );
      }
    });
  }
  if (!record.function_calling) {
    const why = `The model \`${id}\` does not support function calling (tools).`;
    if (req.options.tools.length > 0) throw unsupportedCapability(why, "tools");
    req.messages.forEach((m, i) => {
      if (m.role === "tool") throw unsupportedCapability(why, `messages[${i}].role`);
      if (m.parts.some((p) => p.type === "tool_call")) {
        throw unsupportedCapability(why, `messages[${i}].tool_calls`);
      }
    });
  }
}
