import type { CacheMarker, Message, Part, Role } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";
import { parseAssistant } from "./assistant.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { parseContent } from "./content.ts";
import type { PendingImages } from "../shared/images.ts";
import { ToolCallPairing } from "./tool_pairing.ts";

const ROLES: readonly Role[] = ["system", "developer", "user", "assistant", "tool"];
const NON_EMPTY = { nonEmpty: true } as const;
const AT_LEAST_ONE = { minItems: 1 } as const;

/** `messages`: a non-empty array of chat messages whose tool calls and tool messages pair up
 * (OpenAI's rule), as canonical messages. Image data URLs are left to `pending`. */
export function parseMessages(body: Fields, pending: PendingImages): Message[] {
  const pairing = new ToolCallPairing();
  const messages = body.array("messages", AT_LEAST_ONE).map((item, i) => {
    const message = parseMessage(item.object(), pending);
    pairing.add(message, i);
    return message;
  });
  pairing.end();
  return messages;
}

function parseMessage(f: Fields, pending: PendingImages): Message {
  const message = messageOf(f, pending);
  const cache = parseCacheControl(f.object("cache_control", OPTIONAL));
  if (cache) markLast(message.parts, cache);
  return message;
}

function messageOf(f: Fields, pending: PendingImages): Message {
  const role = f.oneOf("role", ROLES);
  switch (role) {
    case "system":
    case "developer":
    case "user":
      return named(
        { role, parts: parseContent(f.get("content"), kindsOf(role), role, pending) },
        f,
      );
    case "assistant":
      return named(parseAssistant(f, pending), f);
    case "tool": {
      const parts = parseContent(f.get("content"), "text", role, pending);
      const id = f.string("tool_call_id", NON_EMPTY);
      return { role, parts: [{ type: "tool_result", callId: id, content: parts, isError: false }] };
    }
  }
}

/** Users may send images and files; system and developer messages only text. */
function kindsOf(role: "system" | "developer" | "user"): "text" | "text+media" {
  return role === "user" ? "text+media" : "text";
}

/** The message with the participant `name` the caller gave, if any. */
function named(message: Message, f: Fields): Message {
  const name = f.string("name", OPTIONAL);
  if (name !== undefined) message.name = name;
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
