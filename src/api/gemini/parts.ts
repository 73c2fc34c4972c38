/**
 * Canonical answer parts as the parts of a Gemini `model` content: text and refusals ->
 * `text`; reasoning -> a `thought: true` text when thoughts are shown, with its signature when
 * it is Gemini's; a reasoning part holding only Gemini's signature -> `thoughtSignature` on the
 * part before it (where Gemini had it), or the next one; tool calls -> `functionCall` with
 * their id and their arguments object. Signatures of other styles are left out.
 */
import type { Part, ToolCallPart } from "../../canonical/conversation.ts";
import type { GeminiPart } from "../../types/gemini.ts";
import { GEMINI_STYLE } from "./contents.ts";

/** The Gemini parts of an answer's parts; `includeThoughts` shows thought summaries. */
export function toGeminiParts(parts: readonly Part[], includeThoughts: boolean): GeminiPart[] {
  const out: GeminiPart[] = [];
  let waiting: string | null = null;
  const add = (part: GeminiPart) => {
    if (waiting !== null && part.thoughtSignature === undefined) {
      part.thoughtSignature = waiting;
      waiting = null;
    }
    out.push(part);
  };
  for (const part of parts) {
    switch (part.type) {
      case "text":
      case "refusal":
        if (part.text !== "") add({ text: part.text });
        break;
      case "tool_call":
        add(functionCallPart(part.id, part.name, part.arguments));
        break;
      case "reasoning": {
        const signature = part.style === GEMINI_STYLE && part.signature ? part.signature : null;
        if (part.text !== "" && includeThoughts) {
          const thought: GeminiPart = { text: part.text, thought: true };
          if (signature !== null) thought.thoughtSignature = signature;
          add(thought);
        } else if (signature !== null && part.text === "") {
          const before = out.at(-1);
          if (before !== undefined && before.thoughtSignature === undefined) {
            before.thoughtSignature = signature;
          } else waiting = signature;
        }
        break;
      }
    }
  }
  if (waiting !== null) out.push({ text: "", thoughtSignature: waiting });
  return out;
}

/** A `functionCall` part: its id, name and arguments (an object; `{}` for arguments that are
 * not one). */
export function functionCallPart(
  id: ToolCallPart["id"],
  name: string,
  json: string,
): GeminiPart {
  return { functionCall: { id, name, args: argumentsObject(json) } };
}

function argumentsObject(json: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // below
  }
  return {};
}
