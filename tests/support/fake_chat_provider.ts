import type { CanonicalRequest } from "../../src/canonical/conversation.ts";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { CanonicalResult } from "../../src/canonical/result.ts";
import { ApiError } from "../../src/errors.ts";
import type { CallContext, Provider } from "../../src/providers/types.ts";

/** What the fake saw of one call: the request, and the text and images (as data URLs, or the
 * URLs given) of its first user message. */
export interface SeenCall {
  request: CanonicalRequest;
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

  chat(request: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const user = request.messages.find((m) => m.role === "user");
    let userText = "";
    const images: string[] = [];
    for (const part of user?.parts ?? []) {
      if (part.type === "text") userText += part.text;
      else if (part.type === "image") {
        const { source } = part;
        images.push(
          source.kind === "url" ? source.url : `data:${source.mediaType};base64,${source.base64}`,
        );
      }
    }
    this.calls.push({ request, upstreamModel: ctx.upstreamModel, userText, images });
    const answer = this.reply(userText, images);
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve({
      parts: [{ type: "text", text: answer }],
      finish: "stop",
      usage: { input: 10, output: 5 },
    });
  }

  // deno-lint-ignore require-yield
  async *chatStream(): AsyncIterable<CanonicalEvent[]> {
    throw new ApiError(500, "server_error", "the fake does not stream");
  }
}
