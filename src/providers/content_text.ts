import type { ChatMessage } from "../types/openai.ts";

/** The text of a message's content: a string as is, text parts joined by newlines (image
 * parts left out); `""` for null content. */
export function contentText(content: ChatMessage["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) {
    if (part.type === "text") text += (text === "" ? "" : "\n") + part.text;
  }
  return text;
}
