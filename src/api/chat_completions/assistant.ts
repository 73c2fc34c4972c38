/**
 * Assistant messages sent back by a client: content, `refusal`, `tool_calls`, and the model's
 * reasoning as the gateway gave it out (`reasoning_content`, and LiteLLM's `thinking_blocks`
 * with their signatures), so that a tool loop continues on a back end that checks them.
 */
import type { Message, Part, ReasoningPart, ToolCallPart } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import { parseContent } from "./content.ts";
import type { PendingImages } from "../shared/images.ts";
import { FUNCTION_NAME } from "../shared/tool_names.ts";
import { FUNCTION_TYPE } from "./tools.ts";

/** The style of reasoning parts that carry Anthropic signatures (`thinking_blocks`). */
export const ANTHROPIC_STYLE = "anthropic";

const NON_EMPTY = { nonEmpty: true } as const;
const ARGUMENTS = { expected: "a string of JSON-encoded arguments" } as const;
const BLOCK_TYPES = ["thinking", "redacted_thinking"] as const;

/** An assistant message's parts in the order a model produces them: reasoning, content,
 * refusal, tool calls. */
export function parseAssistant(f: Fields, pending: PendingImages): Message {
  const calls = f.array("tool_calls", OPTIONAL);
  const toolCalls = calls === undefined ? [] : parseToolCalls(calls);
  const refusal = f.string("refusal", OPTIONAL);
  const parts: Part[] = parseReasoning(f);
  const content = f.optional("content");
  if (content !== undefined) {
    const others = toolCalls.length > 0 || refusal !== undefined;
    // `"content": ""` beside tool calls is a client's way to say "no text".
    for (const part of parseContent(content, "text+refusal", "assistant", pending)) {
      if (!(others && part.type === "text" && part.text === "")) parts.push(part);
    }
  } else if (toolCalls.length === 0 && refusal === undefined) {
    throw f.get("content").missing(
      "An assistant message needs 'content' unless it has 'tool_calls' or a 'refusal'.",
    );
  }
  if (refusal !== undefined) parts.push({ type: "refusal", text: refusal });
  parts.push(...toolCalls);
  return { role: "assistant", parts };
}

/** `tool_calls`: function calls with unique ids and JSON-text arguments. */
function parseToolCalls(items: Reader[]): ToolCallPart[] {
  const seen = new Set<string>();
  return items.map((item): ToolCallPart => {
    const call = item.object();
    const id = call.string("id", NON_EMPTY);
    if (seen.has(id)) {
      throw call.get("id").invalid(`expected a unique tool call id, but got ${quote(id)} again`);
    }
    seen.add(id);
    call.oneOf("type", FUNCTION_TYPE);
    const fn = call.object("function");
    const name = fn.string("name", FUNCTION_NAME);
    return { type: "tool_call", id, name, arguments: fn.string("arguments", ARGUMENTS) };
  });
}

/**
 * The reasoning of an assistant message: LiteLLM's `thinking_blocks` (`{type: "thinking",
 * thinking, signature}` or `{type: "redacted_thinking", data}`) as Anthropic-style reasoning
 * parts, else `reasoning_content` as unsigned reasoning (its text is the same as the blocks',
 * so it is not taken twice).
 */
function parseReasoning(f: Fields): ReasoningPart[] {
  const text = f.string("reasoning_content", OPTIONAL);
  const blocks = f.array("thinking_blocks", OPTIONAL);
  if (blocks === undefined) {
    return text !== undefined && text !== "" ? [{ type: "reasoning", text }] : [];
  }
  return blocks.map((block) => thinkingBlock(block.object()));
}

function thinkingBlock(block: Fields): ReasoningPart {
  if (block.oneOf("type", BLOCK_TYPES) === "redacted_thinking") {
    return { type: "reasoning", text: "", redacted: block.string("data"), style: ANTHROPIC_STYLE };
  }
  const part: ReasoningPart = {
    type: "reasoning",
    text: block.string("thinking"),
    style: ANTHROPIC_STYLE,
  };
  const signature = block.string("signature", OPTIONAL);
  if (signature !== undefined) part.signature = signature;
  return part;
}
