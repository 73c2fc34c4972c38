import type { Extras, Part, ToolCallPart } from "../../canonical/conversation.ts";
import type { CanonicalResult, FinishReason } from "../../canonical/result.ts";
import { usageExtras, usageFromOpenAI } from "./usage.ts";
import { isObject, type JsonObject, malformed, otherFields, stringField } from "../wire.ts";

/** Fields of a completion, its choice and its message that the canonical result carries (or
 * the gateway sets itself: `object`, `created`, `model`). */
const COMPLETION_FIELDS: ReadonlySet<string> = new Set([
  "id",
  "object",
  "created",
  "model",
  "choices",
  "usage",
]);
const CHOICE_FIELDS: ReadonlySet<string> = new Set(["index", "message", "finish_reason"]);
const MESSAGE_FIELDS: ReadonlySet<string> = new Set([
  "role",
  "content",
  "refusal",
  "tool_calls",
  "reasoning_content",
  "reasoning",
]);

const FINISH_REASONS: ReadonlySet<string> = new Set([
  "stop",
  "length",
  "tool_calls",
  "content_filter",
]);

/** An upstream `finish_reason` as a canonical one: `function_call` is `tool_calls`, anything
 * unknown or missing is `tool_calls` when the answer called tools and `stop` otherwise. */
export function finishOf(value: unknown, calledTools: boolean): FinishReason {
  if (typeof value === "string" && FINISH_REASONS.has(value)) return value as FinishReason;
  if (value === "function_call") return "tool_calls";
  return calledTools ? "tool_calls" : "stop";
}

/**
 * A canonical result for an upstream chat completion (its first choice: the gateway asks for
 * one): parts in order (reasoning from `reasoning_content`, or OpenRouter's and Ollama's
 * `reasoning`; text; refusal; tool calls), finish and usage; the rest in `extras` for a chat
 * front door, as a partial completion in the wire's own shape: other top-level fields
 * (`system_fingerprint`, `service_tier`, ...), `usage` details beyond the modelled ones, and
 * `choices[0]` fields (`logprobs`, ...) with its `message` fields (`annotations`, `audio`, ...);
 * `null`s left out. Throws a 502 for an answer without choices.
 */
export function fromOpenAICompletion(data: unknown): CanonicalResult {
  if (!isObject(data) || !Array.isArray(data.choices) || data.choices.length === 0) {
    throw malformed("completion (no choices)");
  }
  const choice = data.choices[0];
  if (!isObject(choice) || !isObject(choice.message)) {
    throw malformed("completion (a choice without a message)");
  }
  const message = choice.message;
  const parts: Part[] = [];
  const reasoning = reasoningText(message);
  if (reasoning) parts.push({ type: "reasoning", text: reasoning, style: "openai" });
  const text = contentOf(message.content);
  if (text) parts.push({ type: "text", text });
  const refusal = stringField(message, "refusal");
  if (refusal) parts.push({ type: "refusal", text: refusal });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map(toolCallOf) : [];
  parts.push(...calls);

  const result: CanonicalResult = {
    parts,
    finish: finishOf(choice.finish_reason, calls.length > 0),
    usage: usageFromOpenAI(data.usage),
  };
  const id = stringField(data, "id");
  if (id !== null) result.id = id;
  const extras = completionExtras(data, choice, message);
  if (extras !== null) result.extras = extras;
  return result;
}

/** The reasoning text of a message or stream delta: `reasoning_content` (DeepSeek, vLLM,
 * llama.cpp), else `reasoning` (OpenRouter, Ollama, Groq); `""` when neither is a string. */
export function reasoningText(obj: JsonObject): string {
  return stringField(obj, "reasoning_content") || stringField(obj, "reasoning") || "";
}

function completionExtras(data: JsonObject, choice: JsonObject, message: JsonObject) {
  const fields: JsonObject = { ...otherFields(data, COMPLETION_FIELDS) };
  const usage = usageExtras(data.usage);
  if (usage !== null) fields.usage = usage;
  const choiceFields: JsonObject = { ...otherFields(choice, CHOICE_FIELDS) };
  const messageFields = otherFields(message, MESSAGE_FIELDS);
  if (messageFields !== null) choiceFields.message = messageFields;
  if (Object.keys(choiceFields).length > 0) fields.choices = [choiceFields];
  if (Object.keys(fields).length === 0) return null;
  const extras: Extras = { protocol: "openai_chat", fields };
  return extras;
}

function contentOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    return value.map((part) => isObject(part) ? stringField(part, "text") ?? "" : "").join("");
  }
  return "";
}

/** One upstream tool call; `arguments` sent as an object (some servers do) becomes JSON text. */
function toolCallOf(value: unknown): ToolCallPart {
  if (!isObject(value) || !isObject(value.function)) {
    throw malformed("tool call (no function)");
  }
  const name = stringField(value.function, "name");
  if (name === null) throw malformed("tool call (no function name)");
  return {
    type: "tool_call",
    id: stringField(value, "id") || newToolCallId(),
    name,
    arguments: argumentsText(value.function.arguments),
  };
}

/** Tool-call arguments as JSON text: a string as is, an object (Ollama) serialized, none
 * `"{}"` in a whole call and `""` in a stream fragment (`whole` false). */
export function argumentsText(args: unknown, whole = true): string {
  if (typeof args === "string") return args;
  if (args === undefined || args === null) return whole ? "{}" : "";
  return JSON.stringify(args);
}

/** A fresh `call_...` id for upstreams that send none. */
export function newToolCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
