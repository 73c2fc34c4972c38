import { ApiError } from "../../src/errors.ts";
import type { CallContext, Provider } from "../../src/providers/types.ts";
import type { ChatChunk, ChatCompletion, ChatRequest } from "../../src/types/openai.ts";

/** What the fake saw of one call: the request and the text and images of its user message. */
export interface SeenCall {
  request: ChatRequest;
  upstreamModel: string;
  userText: string;
  images: string[];
}

/**
 * A chat-only Provider whose answers come from `reply` (given the user message's text and
 * images); it records every call. For guard-prompt moderation tests.
 */
export class FakeChatProvider implements Provider {
  readonly calls: SeenCall[] = [];

  constructor(
    readonly id: string,
    private readonly reply: (userText: string, images: string[]) => string | Error,
  ) {}

  chat(request: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
    const user = request.messages.find((m) => m.role === "user");
    let userText = "";
    const images: string[] = [];
    if (typeof user?.content === "string") userText = user.content;
    else {
      for (const part of user?.content ?? []) {
        if (part.type === "text") userText += part.text;
        else images.push(part.image_url.url);
      }
    }
    this.calls.push({ request, upstreamModel: ctx.upstreamModel, userText, images });
    const answer = this.reply(userText, images);
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve({
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 0,
      model: ctx.model.id,
      choices: [{
        index: 0,
        message: { role: "assistant", content: answer, refusal: null },
        logprobs: null,
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  }

  // deno-lint-ignore require-yield
  async *chatStream(): AsyncIterable<ChatChunk> {
    throw new ApiError(500, "server_error", "the fake does not stream");
  }
}
