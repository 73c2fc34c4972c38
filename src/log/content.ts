/** What the request log keeps of a chat's messages, with `logs.include_content` on. */
import type { Message, Part } from "../canonical/conversation.ts";

/** The messages as `{role, content}` with their text only (text parts joined by newlines;
 * images, documents, tool calls and reasoning left out). */
export function loggedMessages(messages: readonly Message[]): { role: string; content: string }[] {
  return messages.map((m) => ({ role: m.role, content: textOf(m.parts) }));
}

function textOf(parts: readonly Part[]): string {
  const texts: string[] = [];
  for (const part of parts) {
    if (part.type === "text") texts.push(part.text);
    else if (part.type === "tool_result") texts.push(textOf(part.content));
  }
  return texts.join("\n");
}
