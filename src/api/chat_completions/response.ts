/**
 * Canonical results as chat completions (spec §2.5): the parts as one assistant message, the
 * finish reason, the usage, and (from a back end of the same protocol) the fields the
 * canonical model does not carry, each where OpenAI puts it.
 */
import type { Part, ReasoningPart } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import { ANTHROPIC_STYLE } from "./assistant.ts";
import { fillIn, openAIFields } from "./extras.ts";
import { renderFinish } from "./finish.ts";
import { renderUsage } from "./usage.ts";
import type {
  ChatCompletion,
  ThinkingBlock,
  WireChoice,
  WireMessage,
  WireToolCall,
} from "./wire.ts";

/** What a completion says besides the result: its id and time, and the gateway's model id
 * (never the upstream's). */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
  /** Leave the reasoning out of the answer (OpenRouter's `reasoning.exclude`). */
  excludeReasoning: boolean;
}

/** The completion for a result. */
export function renderCompletion(result: CanonicalResult, head: CompletionHead): ChatCompletion {
  const choice: WireChoice = {
    index: 0,
    message: renderMessage(result.parts, head.excludeReasoning),
    logprobs: null,
    ...renderFinish(result.finish, result.stopDetail),
  };
  const completion: ChatCompletion = {
    id: head.id,
    object: "chat.completion",
    created: head.created,
    model: head.model,
    choices: [choice],
    usage: renderUsage(result.usage),
  };
  const fields = openAIFields(result.extras);
  if (fields) fillIn(completion as unknown as Record<string, unknown>, fields);
  return completion;
}

/**
 * The assistant message for a result's parts: text joined as `content` (`null` when there is
 * none but tool calls or a refusal), `refusal`, the reasoning text as `reasoning_content`,
 * signed or redacted reasoning as `thinking_blocks` (LiteLLM's convention, so that a client
 * that sends the message back continues a tool loop on Anthropic), and `tool_calls`.
 */
export function renderMessage(parts: readonly Part[], excludeReasoning: boolean): WireMessage {
  let text: string | null = null;
  let refusal: string | null = null;
  let reasoning = "";
  const blocks: ThinkingBlock[] = [];
  const calls: WireToolCall[] = [];
  for (const part of parts) {
    if (part.type === "text") text = (text ?? "") + part.text;
    else if (part.type === "refusal") refusal = (refusal ?? "") + part.text;
    else if (part.type === "tool_call") {
      calls.push({
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: part.arguments },
      });
    } else if (part.type === "reasoning") {
      reasoning += part.text;
      const block = thinkingBlock(part);
      if (block) blocks.push(block);
    }
  }
  const message: WireMessage = {
    role: "assistant",
    content: text ?? (calls.length > 0 || refusal !== null ? null : ""),
    refusal,
  };
  if (!excludeReasoning) {
    if (reasoning !== "") message.reasoning_content = reasoning;
    if (blocks.length > 0) message.thinking_blocks = blocks;
  }
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** A reasoning part as a thinking block a client can send back, or `null` when it carries
 * nothing to check (no signature, no payload) or came from a style other than Anthropic's. */
export function thinkingBlock(part: ReasoningPart): ThinkingBlock | null {
  if (part.style !== undefined && part.style !== ANTHROPIC_STYLE) return null;
  if (part.redacted !== undefined) return { type: "redacted_thinking", data: part.redacted };
  if (part.signature !== undefined) {
    return { type: "thinking", thinking: part.text, signature: part.signature };
  }
  return null;
}

/** The completion id: the upstream's (`msg_abc` -> `chatcmpl-abc`), else one from the request
 * id. */
export function completionId(upstreamId: string | undefined, requestId: string): string {
  if (upstreamId === undefined || upstreamId === "") {
    return `chatcmpl-${requestId.replace(/^req_/, "")}`;
  }
  return upstreamId.startsWith("chatcmpl-")
    ? upstreamId
    : `chatcmpl-${upstreamId.replace(/^msg_/, "")}`;
}
