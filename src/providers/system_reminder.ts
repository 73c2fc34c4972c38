/**
 * A system message after the model has spoken, for an upstream whose system prompt is one
 * field before all turns (Anthropic's `system`, Gemini's `systemInstruction`): hoisting it
 * there would move it before answers it came after (Claude Code's mid-conversation system
 * messages change the tools and the environment from a point on). So it stays at its place,
 * as user-side text marked the way Claude Code marks its own reminders, which Claude and
 * Gemini models read as instructions from the harness, not words of the user. (A system
 * message before the first answer is still hoisted: nothing the model said comes before it.)
 */
import type { Part, TextPart } from "../canonical/conversation.ts";

/** The text of a later system message's parts, marked as a system reminder; `null` when it has
 * no text. */
export function systemReminder(parts: readonly Part[]): string | null {
  const text = parts.filter((p): p is TextPart => p.type === "text" && p.text.trim() !== "")
    .map((p) => p.text).join("\n");
  return text === "" ? null : `<system-reminder>\n${text}\n</system-reminder>`;
}
