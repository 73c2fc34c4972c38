/**
 * The text a canonical conversation carries, as guardrails read and rewrite it: every text of
 * the messages (text parts, text documents, tool results, tool-call arguments) or of an
 * answer, mapped without copying what does not change, and replaced by a webhook's verdict.
 * A PDF document's content is not read (its title and context are). Pure functions.
 */
import type { DocumentPart, Message, Part } from "../canonical/conversation.ts";

/** `messages` with `fn` applied to every text they carry (text, documents, tool results,
 * tool-call arguments); the same array when nothing changed. */
export function mapMessages(messages: Message[], fn: (text: string) => string): Message[] {
  let out: Message[] | null = null;
  messages.forEach((message, i) => {
    const parts = mapParts(message.parts, fn);
    if (parts !== message.parts) (out ??= [...messages])[i] = { ...message, parts };
  });
  return out ?? messages;
}

/** `parts` with `fn` applied to every text they carry; the same array when nothing changed. */
export function mapParts(parts: Part[], fn: (text: string) => string): Part[] {
  let out: Part[] | null = null;
  parts.forEach((part, i) => {
    let changed: Part | null = null;
    if (part.type === "text" || part.type === "refusal") {
      const text = fn(part.text);
      if (text !== part.text) changed = { ...part, text };
    } else if (part.type === "tool_call") {
      const args = fn(part.arguments);
      if (args !== part.arguments) changed = { ...part, arguments: args };
    } else if (part.type === "document") {
      const document = mapDocument(part, fn);
      if (document !== part) changed = document;
    } else if (part.type === "tool_result") {
      const content = mapParts(part.content, fn) as typeof part.content;
      if (content !== part.content) changed = { ...part, content };
    }
    if (changed !== null) (out ??= [...parts])[i] = changed;
  });
  return out ?? parts;
}

/** A document with `fn` applied to its title, context and text (a text document's); the same
 * part when nothing changed. */
function mapDocument(part: DocumentPart, fn: (text: string) => string): DocumentPart {
  const out: DocumentPart = { ...part };
  if (part.title !== undefined) out.title = fn(part.title);
  if (part.context !== undefined) out.context = fn(part.context);
  if (part.source.kind === "text") {
    const text = fn(part.source.text);
    if (text !== part.source.text) out.source = { kind: "text", text };
  }
  const same = out.title === part.title && out.context === part.context &&
    out.source === part.source;
  return same ? part : out;
}

/** The text a message carries (its text parts, text documents and tool results), for
 * moderation and webhooks. */
export function messageText(message: Message): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part.type === "text") texts.push(part.text);
    else if (part.type === "document" && part.source.kind === "text") {
      texts.push(part.source.text);
    } else if (part.type === "tool_result") {
      for (const p of part.content) {
        if (p.type === "text") texts.push(p.text);
        else if (p.type === "document" && p.source.kind === "text") texts.push(p.source.text);
      }
    }
  }
  return texts.join("\n");
}

/** The text of an answer (text and refusals). */
export function answerText(parts: readonly Part[]): string {
  return parts.flatMap((p) => p.type === "text" || p.type === "refusal" ? [p.text] : []).join("");
}

/** `messages` with each message's text replaced by a webhook's (its first text part holds it,
 * its other text parts are emptied); messages beyond `texts` are kept. */
export function replaceMessageTexts(messages: Message[], texts: readonly string[]): Message[] {
  return messages.map((message, i) => {
    const text = texts[i];
    if (text === undefined || text === messageText(message)) return message;
    let first = true;
    const parts = message.parts.flatMap((part): Part[] => {
      const textDocument = part.type === "document" && part.source.kind === "text";
      if (part.type !== "text" && part.type !== "tool_result" && !textDocument) return [part];
      const replaced = first ? text : "";
      first = false;
      if (part.type === "text") return replaced === "" ? [] : [{ ...part, text: replaced }];
      if (part.type === "document") {
        return replaced === "" ? [] : [{ ...part, source: { kind: "text", text: replaced } }];
      }
      if (part.type !== "tool_result") return [part];
      return [{ ...part, content: replaced === "" ? [] : [{ type: "text", text: replaced }] }];
    });
    return { ...message, parts };
  });
}

/** An answer's parts with its text replaced by a webhook's (in its first text part). */
export function replaceAnswerText(parts: Part[], text: string): Part[] {
  let first = true;
  return parts.flatMap((part): Part[] => {
    if (part.type !== "text") return [part];
    const replaced = first ? text : "";
    first = false;
    return replaced === "" ? [] : [{ ...part, text: replaced }];
  });
}
