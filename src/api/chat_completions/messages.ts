import type { CacheMarker, Message, Part, Role } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";
import { parseAssistant } from "./assistant.ts";
import { parseCacheControl } from "./cache_control.ts";
import { absent, invalidType, isObject, kindOf, missing, type Obj } from "./checks.ts";
import { parseContent } from "./content.ts";
import type { PendingImages } from "./images.ts";
import { ToolCallPairing } from "./tool_pairing.ts";

const ROLES: readonly Role[] = ["system", "developer", "user", "assistant", "tool"];

/** `messages`: a non-empty array of chat messages whose tool calls and tool messages pair up
 * (OpenAI's rule), as canonical messages. Image data URLs are left to `pending`. */
export function parseMessages(value: unknown, pending: PendingImages): Message[] {
  if (absent(value)) {
    throw missing("You must provide `messages`: a non-empty array of chat messages.", "messages");
  }
  if (!Array.isArray(value)) {
    throw invalidType(
      `\`messages\` must be an array of chat messages, not ${kindOf(value)}.`,
      "messages",
    );
  }
  if (value.length === 0) {
    throw invalidValue("`messages` must contain at least one message.", "messages");
  }
  const pairing = new ToolCallPairing();
  const messages = value.map((raw, i) => {
    const message = parseMessage(raw, `messages[${i}]`, pending);
    pairing.add(message, i);
    return message;
  });
  pairing.end();
  return messages;
}

function parseMessage(raw: unknown, path: string, pending: PendingImages): Message {
  if (!isObject(raw)) {
    throw invalidType(
      `\`${path}\` must be an object with \`role\` and \`content\`, not ${kindOf(raw)}.`,
      path,
    );
  }
  const message = messageOf(raw, path, pending);
  const cache = parseCacheControl(raw.cache_control, `${path}.cache_control`);
  if (cache) markLast(message.parts, cache);
  return message;
}

function messageOf(raw: Obj, path: string, pending: PendingImages): Message {
  const role = raw.role;
  const content = `${path}.content`;
  switch (role) {
    case "system":
    case "developer":
      return named(
        { role, parts: parseContent(raw.content, content, "text", role, pending) },
        raw,
        path,
      );
    case "user":
      return named(
        { role, parts: parseContent(raw.content, content, "text+image", role, pending) },
        raw,
        path,
      );
    case "assistant":
      return named(parseAssistant(raw, path, pending), raw, path);
    case "tool": {
      const parts = parseContent(raw.content, content, "text", role, pending);
      const id = raw.tool_call_id;
      if (typeof id !== "string" || id === "") {
        const message =
          `\`${path}.tool_call_id\` must be the id of the tool call this message answers${
            id === undefined ? " (it is missing)" : `, not ${kindOf(id)}`
          }.`;
        const param = `${path}.tool_call_id`;
        throw id === undefined
          ? missing(message, param)
          : typeof id === "string"
          ? invalidValue(message, param)
          : invalidType(message, param);
      }
      return { role, parts: [{ type: "tool_result", callId: id, content: parts, isError: false }] };
    }
    default: {
      const message = `\`${path}.role\` must be one of ${ROLES.map((r) => `"${r}"`).join(", ")}${
        role === undefined ? " (it is missing)" : `, not ${quote(role)}`
      }.`;
      throw role === undefined
        ? missing(message, `${path}.role`)
        : invalidValue(message, `${path}.role`);
    }
  }
}

/** The message with the participant `name` the caller gave, if any. */
function named(message: Message, raw: Obj, path: string): Message {
  const name = raw.name;
  if (absent(name)) return message;
  if (typeof name !== "string") {
    throw invalidType(`\`${path}.name\` must be a string, not ${kindOf(name)}.`, `${path}.name`);
  }
  message.name = name;
  return message;
}

/** A message's `cache_control` marks its last part that can carry one (LiteLLM's convention). */
function markLast(parts: Part[], cache: CacheMarker): void {
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    if (part.type !== "reasoning" && part.type !== "refusal") {
      part.cache = cache;
      return;
    }
  }
}
