import type { ChatCompletion, Choice, FinishReason, ToolCall } from "../types/openai.ts";
import { isObject, type JsonObject, malformed, openAIUsage, stringField } from "./wire.ts";

const FINISH_REASONS: ReadonlySet<string> = new Set([
  "stop",
  "length",
  "tool_calls",
  "content_filter",
]);

/** An upstream `finish_reason` in the public set: `function_call` is `tool_calls`, anything
 * unknown or missing is `tool_calls` when the choice called tools and `stop` otherwise. */
export function normalizeFinishReason(value: unknown, calledTools: boolean): FinishReason {
  if (typeof value === "string" && FINISH_REASONS.has(value)) return value as FinishReason;
  if (value === "function_call") return "tool_calls";
  return calledTools ? "tool_calls" : "stop";
}

/** An upstream completion in the public shape, with `model` the gateway's id; throws a 502
 * for an answer without choices. Upstream extras are dropped. */
export function fromOpenAICompletion(data: unknown, model: string, now: number): ChatCompletion {
  if (!isObject(data) || !Array.isArray(data.choices) || data.choices.length === 0) {
    throw malformed("completion (no choices)");
  }
  const choices = data.choices.map((choice, i): Choice => {
    if (!isObject(choice) || !isObject(choice.message)) {
      throw malformed("completion (a choice without a message)");
    }
    const toolCalls = Array.isArray(choice.message.tool_calls)
      ? choice.message.tool_calls.map(toolCallOf)
      : [];
    let content = contentOf(choice.message.content);
    if (content === null && toolCalls.length === 0) content = "";
    const out: Choice = {
      index: typeof choice.index === "number" ? choice.index : i,
      message: { role: "assistant", content, refusal: null },
      logprobs: null,
      finish_reason: normalizeFinishReason(choice.finish_reason, toolCalls.length > 0),
    };
    if (toolCalls.length > 0) out.message.tool_calls = toolCalls;
    return out;
  });
  return {
    id: stringField(data, "id") ?? newCompletionId(),
    object: "chat.completion",
    created: typeof data.created === "number" ? data.created : Math.floor(now / 1000),
    model,
    choices,
    usage: openAIUsage(data.usage),
  };
}

function contentOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    return value.map((part) => isObject(part) ? stringField(part, "text") ?? "" : "").join("");
  }
  return null;
}

/** One upstream tool call; `arguments` sent as an object (some servers do) becomes JSON text. */
export function toolCallOf(value: unknown): ToolCall {
  if (!isObject(value) || !isObject(value.function)) {
    throw malformed("tool call (no function)");
  }
  const name = stringField(value.function, "name");
  if (name === null) throw malformed("tool call (no function name)");
  return {
    id: stringField(value, "id") ?? newToolCallId(),
    type: "function",
    function: { name, arguments: argumentsOf(value.function) },
  };
}

function argumentsOf(fn: JsonObject): string {
  const args = fn.arguments;
  if (typeof args === "string") return args;
  return args === undefined || args === null ? "{}" : JSON.stringify(args);
}

/** A fresh `chatcmpl-…` id for upstreams that send none. */
export function newCompletionId(): string {
  return `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
}

/** A fresh `call_…` id for upstreams that send none. */
export function newToolCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
