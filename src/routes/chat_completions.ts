import { viewerOf } from "../auth/principal.ts";
import { resolveModel } from "../catalogue/access.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import type { RequestContext } from "../context.ts";
import { ApiError, internalError, modelNotFound, unsupportedCapability } from "../errors.ts";
import { readJsonObject } from "../http/body.ts";
import { json } from "../http/response.ts";
import { chatStreamResponse, CLIENT_CLOSED } from "../http/sse_response.ts";
import { contentText } from "../providers/content_text.ts";
import type { CallContext } from "../providers/types.ts";
import type { ChatChunk, ChatRequest, ResponseMessage } from "../types/openai.ts";
import { parseChatRequest } from "./chat_request.ts";

/**
 * `POST /v1/chat/completions` (spec §4.2): validate, resolve the model and its capabilities,
 * call its provider, and answer a chat completion or an SSE stream of chunks.
 */
export async function createChatCompletion(ctx: RequestContext): Promise<Response> {
  const { config, catalogue, providers, logger } = ctx.services;
  const body = await readJsonObject(ctx.request, config.server);
  const req = parseChatRequest(body, config.limits);
  ctx.log.model = req.model;
  const record = resolveModel(catalogue, providers, req.model, viewerOf(ctx.principal));
  ctx.log.provider = record.provider;
  checkCapabilities(req, record);
  const provider = providers.get(record.provider);
  if (!provider) throw modelNotFound(req.model);

  // A stream's call also stops when its response body is cancelled (`abort`).
  const abort = new AbortController();
  const call: CallContext = {
    signal: req.stream ? followed(abort, ctx.signal) : ctx.signal,
    requestId: ctx.requestId,
    upstreamModel: record.upstream_model,
    model: record,
  };
  const logContent = config.logs.include_content;
  const output: ResponseMessage = { role: "assistant", content: null, refusal: null };
  if (logContent) {
    ctx.log.content = {
      messages: req.messages.map((m) => ({ role: m.role, content: contentText(m.content) })),
      output,
    };
  }

  if (!req.stream) {
    const completion = await untilClientLeaves(ctx, () => provider.chat(req, call));
    completion.model = record.id;
    ctx.log.prompt_tokens = completion.usage.prompt_tokens;
    ctx.log.completion_tokens = completion.usage.completion_tokens;
    if (logContent && completion.choices[0]) Object.assign(output, completion.choices[0].message);
    return json(completion);
  }

  ctx.log.stream = true;
  return await untilClientLeaves(ctx, () =>
    chatStreamResponse(
      provider.chatStreamBatches
        ? provider.chatStreamBatches(req, call)
        : provider.chatStream(req, call),
      {
        includeUsage: req.include_usage,
        abort,
        signal: call.signal,
        onUsage(usage) {
          ctx.log.prompt_tokens = usage.prompt_tokens;
          ctx.log.completion_tokens = usage.completion_tokens;
        },
        onChunk(chunk) {
          chunk.model = record.id;
          if (logContent) collect(output, chunk);
        },
        deferLog: () => ctx.deferLog(),
        onUnexpected(error) {
          logger.error("chat stream failed", error, ctx.requestId);
          return internalError(ctx.requestId);
        },
      },
    ));
}

/** `abort`'s signal, aborted also when `signal` is (one listener; `AbortSignal.any` costs
 * several microseconds per request). */
function followed(abort: AbortController, signal: AbortSignal): AbortSignal {
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener("abort", () => abort.abort(signal.reason), { once: true });
  return abort.signal;
}

/** The model's capabilities against what the request uses (spec §4.2 rules 4–6). */
function checkCapabilities(req: ChatRequest, record: ModelRecord): void {
  const id = record.id;
  if (!record.chat_completions) {
    throw unsupportedCapability(`The model \`${id}\` does not support chat completions.`, "model");
  }
  if (!record.image_input) {
    req.messages.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      const j = m.content.findIndex((p) => p.type === "image_url");
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
    if (req.tools.length > 0) throw unsupportedCapability(why, "tools");
    req.messages.forEach((m, i) => {
      if (m.role === "assistant" && m.tool_calls) {
        throw unsupportedCapability(why, `messages[${i}].tool_calls`);
      }
      if (m.role === "tool") throw unsupportedCapability(why, `messages[${i}].role`);
    });
  }
}

/** Runs a provider call; a failure caused by the client leaving is reported as such (499),
 * not as a server error. */
async function untilClientLeaves<T>(ctx: RequestContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (ctx.signal.aborted && !(e instanceof ApiError)) {
      throw new ApiError(CLIENT_CLOSED, "invalid_request_error", "The client closed the request.", {
        code: "client_disconnected",
      });
    }
    throw e;
  }
}

/** Adds a chunk's deltas to the message kept for the content log. */
function collect(message: ResponseMessage, chunk: ChatChunk): void {
  const delta = chunk.choices[0]?.delta;
  if (!delta) return;
  if (delta.content) message.content = (message.content ?? "") + delta.content;
  for (const t of delta.tool_calls ?? []) {
    const calls = message.tool_calls ??= [];
    const call = calls[t.index] ??= {
      id: t.id ?? "",
      type: "function",
      function: { name: t.function?.name ?? "", arguments: "" },
    };
    call.function.arguments += t.function?.arguments ?? "";
  }
}
