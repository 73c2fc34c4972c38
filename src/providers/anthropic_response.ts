import type { ChatCompletion, FinishReason, ToolCall, Usage } from "../types/openai.ts";
import { usageOf } from "./chunks.ts";
import { countField, isObject, malformed, stringField } from "./wire.ts";

/** Anthropic's `stop_reason` as an OpenAI `finish_reason`: end_turn, stop_sequence and
 * pause_turn → stop; max_tokens (and a full context window) → length; tool_use →
 * tool_calls; refusal → content_filter. */
export function finishReasonOf(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/** OpenAI usage from Anthropic usage: prompt tokens include cache writes and reads. */
export function usageFromAnthropic(usage: unknown): Usage {
  if (!isObject(usage)) return usageOf(0, 0);
  const prompt = countField(usage, "input_tokens") +
    countField(usage, "cache_creation_input_tokens") +
    countField(usage, "cache_read_input_tokens");
  return usageOf(prompt, countField(usage, "output_tokens"));
}

/** The public completion id for an Anthropic message id (`msg_abc` → `chatcmpl-abc`). */
export function completionIdOf(messageId: string): string {
  return `chatcmpl-${messageId.replace(/^msg_/, "")}`;
}

/** An Anthropic message as a chat completion: text blocks joined, `tool_use` blocks as tool
 * calls with JSON-string arguments, other blocks (thinking…) skipped; 502 when malformed. */
export function fromAnthropicMessage(data: unknown, model: string, now: number): ChatCompletion {
  if (!isObject(data) || !Array.isArray(data.content)) {
    throw malformed("message (no content)");
  }
  const id = stringField(data, "id");
  if (id === null) throw malformed("message (no id)");
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const block of data.content) {
    if (!isObject(block)) throw malformed("message (a content block that is not an object)");
    if (block.type === "text") {
      text += stringField(block, "text") ?? "";
    } else if (block.type === "tool_use") {
      const callId = stringField(block, "id");
      const name = stringField(block, "name");
      if (callId === null || name === null) throw malformed("message (a tool_use without id)");
      toolCalls.push({
        id: callId,
        type: "function",
        function: { name, arguments: JSON.stringify(isObject(block.input) ? block.input : {}) },
      });
    }
  }
  const completion: ChatCompletion = {
    id: completionIdOf(id),
    object: "chat.completion",
    created: Math.floor(now / 1000),
    model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: text === "" && toolCalls.length > 0 ? null : text,
        refusal: null,
      },
      logprobs: null,
      finish_reason: finishReasonOf(data.stop_reason),
    }],
    usage: usageFromAnthropic(data.usage),
  };
  if (toolCalls.length > 0) completion.choices[0]!.message.tool_calls = toolCalls;
  return completion;
}
