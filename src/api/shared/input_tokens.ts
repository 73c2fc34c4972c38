/** The input tokens of a chat request, for the doors that report them before the back end
 * does (Messages' `message_start`, count_tokens, Gemini's countTokens). */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import type { CallContext, Provider } from "../../providers/types.ts";

/**
 * The back end's own count when it has one, else the estimate of the simulator's tokenizer (a
 * word, or one other character, a token; images 85 tokens; tools by their JSON), which is close
 * to, but not, what OpenAI-style upstreams count.
 */
export function inputTokens(
  provider: Provider,
  req: CanonicalRequest,
  call: CallContext,
): Promise<number> {
  return provider.countTokens?.(req, call) ?? Promise.resolve(promptTokens(req));
}
