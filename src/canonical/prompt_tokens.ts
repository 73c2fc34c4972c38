import type { CanonicalRequest, Part } from "./conversation.ts";
import { countTokens } from "./tokens.ts";

/** Tokens a message costs beyond its parts, and a whole prompt beyond its messages (OpenAI's
 * accounting is similar). */
const MESSAGE_OVERHEAD = 4;
const PROMPT_OVERHEAD = 3;
/** What an image costs (OpenAI's low-detail price). */
const IMAGE_TOKENS = 85;

/** The input tokens of a request: the text of every message part and tool definition, images
 * at a fixed price, plus fixed overheads. */
export function promptTokens(req: CanonicalRequest): number {
  let n = PROMPT_OVERHEAD;
  for (const m of req.messages) {
    n += MESSAGE_OVERHEAD;
    for (const part of m.parts) n += partTokens(part);
  }
  if (req.options.tools.length > 0) n += countTokens(JSON.stringify(req.options.tools));
  return n;
}

function partTokens(part: Part): number {
  switch (part.type) {
    case "text":
    case "reasoning":
    case "refusal":
      return countTokens(part.text);
    case "image":
      return IMAGE_TOKENS;
    case "tool_call":
      return 1 + countTokens(part.arguments);
    case "tool_result": {
      let n = 0;
      for (const inner of part.content) n += partTokens(inner);
      return n;
    }
  }
}
