/** The input tokens of a chat request, for the doors' count endpoints (Messages' count_tokens,
 * Gemini's countTokens). A stream's first usage (`message_start`) is the estimate alone: the
 * back end's count may be a call of its own (Bedrock's CountTokens). */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import type { CallContext, Provider } from "../../providers/types.ts";

/**
 * The back end's own count when it has one (the simulator's, Bedrock's), else the estimate of
 * the simulator's tokenizer (a word, or one other character, a token; images 85 tokens; tools by
 * their JSON), which is close to, but not, what OpenAI-style upstreams count.
 */
export function inputTokens(
  provider: Provider,
  req: CanonicalRequest,
  call: CallContext,
): Promise<number> {
  return provider.countTokens?.(req, call) ?? Promise.resolve(promptTokens(req));
}
