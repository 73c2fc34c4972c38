/**
 * Assistant messages sent back by a client: content, `refusal`, `tool_calls`, and the model's
 * reasoning as the gateway gave it out (`reasoning_content`, and LiteLLM's `thinking_blocks`
 * with their signatures), so that a tool loop continues on a back end that checks them.
 */
import type { Message, Part, ReasoningPart, ToolCallPart } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";
import { absent, invalidType, isObject, kindOf, missing, notThis, type Obj } from "./checks.ts";
import { parseContent } from "./content.ts";
import type { PendingImages } from "./images.ts";
import { expectFunctionType, functionName } from "./tools.ts";

/** The style of reasoning parts that carry Anthropic signatures (`thinking_blocks`). */
export const ANTHROPIC_STYLE = "anthropic";

/** An assistant message's parts in the order a model produces them: reasoning, content,
 * refusal, tool calls. */
export function parseAssistant(raw: Obj, path: string, pending: PendingImages): Message {
  const toolCalls = absent(raw.tool_calls)
    ? []
    : parseToolCalls(raw.tool_calls, `${path}.tool_calls`);
  const refusal = raw.refusal;
  if (!absent(refusal) && typeof refusal !== "string") {
    throw invalidType(
      `\`${path}.refusal\` must be a string, not ${kindOf(refusal)}.`,
      `${path}.refusal`,
    );
  }
  const parts: Part[] = parseReasoning(raw, path);
  if (!absent(raw.content)) {
    const content = parseContent(
      raw.content,
      `${path}.content`,
      "text+refusal",
      "assistant",
      pending,
    );
    const others = toolCalls.length > 0 || !absent(refusal);
    // `"content": ""` beside tool calls is a client's way to say "no text".
    for (const part of content) {
      if (!(others && part.type === "text" && part.text === "")) parts.push(part);
    }
  } else if (toolCalls.length === 0 && absent(refusal)) {
    throw missing(
      `\`${path}.content\` is required unless the assistant message has \`tool_calls\` or a \`refusal\`.`,
      `${path}.content`,
    );
  }
  if (typeof refusal === "string") parts.push({ type: "refusal", text: refusal });
  parts.push(...toolCalls);
  return { role: "assistant", parts };
}

/** `tool_calls`: function calls with unique ids and JSON-text arguments. */
function parseToolCalls(value: unknown, path: string): ToolCallPart[] {
  if (!Array.isArray(value)) {
    throw invalidType(`\`${path}\` must be an array of tool calls, not ${kindOf(value)}.`, path);
  }
  const seen = new Set<string>();
  return value.map((raw, j): ToolCallPart => {
    const at = `${path}[${j}]`;
    if (!isObject(raw)) {
      throw invalidType(`\`${at}\` must be a tool call object, not ${kindOf(raw)}.`, at);
    }
    if (typeof raw.id !== "string" || raw.id === "") {
      const message = `\`${at}.id\` must be a non-empty string, not ${kindOf(raw.id)}.`;
      throw raw.id === undefined
        ? missing(message, `${at}.id`)
        : typeof raw.id === "string"
        ? invalidValue(message, `${at}.id`)
        : invalidType(message, `${at}.id`);
    }
    if (seen.has(raw.id)) {
      throw invalidValue(
        `\`${at}.id\` repeats the id ${quote(raw.id)}; tool call ids must be unique.`,
        `${at}.id`,
      );
    }
    seen.add(raw.id);
    expectFunctionType(raw.type, `${at}.type`);
    const fn = raw.function;
    if (!isObject(fn)) {
      const message = `\`${at}.function\` must be an object with \`name\` and \`arguments\`, not ${
        kindOf(fn)
      }.`;
      throw fn === undefined
        ? missing(message, `${at}.function`)
        : invalidType(message, `${at}.function`);
    }
    const name = functionName(fn.name, `${at}.function.name`);
    if (typeof fn.arguments !== "string") {
      const message =
        `\`${at}.function.arguments\` must be a string of JSON-encoded arguments, not ${
          kindOf(fn.arguments)
        }.`;
      throw fn.arguments === undefined
        ? missing(message, `${at}.function.arguments`)
        : invalidType(message, `${at}.function.arguments`);
    }
    return { type: "tool_call", id: raw.id, name, arguments: fn.arguments };
  });
}

/**
 * The reasoning of an assistant message: LiteLLM's `thinking_blocks` (`{type: "thinking",
 * thinking, signature}` or `{type: "redacted_thinking", data}`) as Anthropic-style reasoning
 * parts, else `reasoning_content` as unsigned reasoning (its text is the same as the blocks',
 * so it is not taken twice).
 */
function parseReasoning(raw: Obj, path: string): ReasoningPart[] {
  const text = raw.reasoning_content;
  if (!absent(text) && typeof text !== "string") {
    throw invalidType(
      `\`${path}.reasoning_content\` must be a string, not ${kindOf(text)}.`,
      `${path}.reasoning_content`,
    );
  }
  const blocks = raw.thinking_blocks;
  if (absent(blocks)) {
    return typeof text === "string" && text !== "" ? [{ type: "reasoning", text }] : [];
  }
  const at = `${path}.thinking_blocks`;
  if (!Array.isArray(blocks)) {
    throw invalidType(`\`${at}\` must be an array of thinking blocks, not ${kindOf(blocks)}.`, at);
  }
  return blocks.map((block, k) => thinkingBlock(block, `${at}[${k}]`));
}

function thinkingBlock(block: unknown, at: string): ReasoningPart {
  if (!isObject(block)) {
    throw invalidType(`\`${at}\` must be a thinking block object, not ${kindOf(block)}.`, at);
  }
  const field = (key: string, required: boolean): string | undefined => {
    const v = block[key];
    if (typeof v === "string") return v;
    if (absent(v) && !required) return undefined;
    const message = `\`${at}.${key}\` must be a string, not ${kindOf(v)}.`;
    throw absent(v) ? missing(message, `${at}.${key}`) : invalidType(message, `${at}.${key}`);
  };
  if (block.type === "thinking") {
    const part: ReasoningPart = {
      type: "reasoning",
      text: field("thinking", true)!,
      style: ANTHROPIC_STYLE,
    };
    const signature = field("signature", false);
    if (signature !== undefined) part.signature = signature;
    return part;
  }
  if (block.type === "redacted_thinking") {
    return { type: "reasoning", text: "", redacted: field("data", true)!, style: ANTHROPIC_STYLE };
  }
  const message = `\`${at}.type\` must be "thinking" or "redacted_thinking"${notThis(block.type)}.`;
  throw block.type === undefined
    ? missing(message, `${at}.type`)
    : invalidValue(message, `${at}.type`);
}
