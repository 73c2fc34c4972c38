/**
 * What the simulator reads of a conversation to answer it: the last user message, the tool
 * results that end the conversation, and a hash that identifies it. Tool results count wherever
 * a front door put them (`tool` messages, or a user message's parts as Anthropic sends them).
 */
import type { DocumentPart, ImagePart, Message, Part } from "../../canonical/conversation.ts";
import { documentSummary } from "./document_description.ts";
import { fnv1a } from "./hash.ts";

/** A tool's answer, with the name of the call it answers (`unknown` when none matches). */
export interface ToolOutcome {
  name: string;
  content: string;
}

/** The facts of a conversation the simulator's answer is built from. */
export interface ConversationFacts {
  /** The text parts of the last user message (one with more than tool results), joined by
   * newlines; `""` when there is none. */
  userText: string;
  /** The images of that message, in order. */
  userImages: ImagePart[];
  /** The documents of that message, in order. */
  userDocuments: DocumentPart[];
  /** Whether the last message carries tool results. */
  afterTools: boolean;
  /** The tool results of the messages that end the conversation, in order. */
  toolResults: ToolOutcome[];
  /** Identifies the conversation: the same messages, the same key (for picking variations and
   * call ids). */
  key: string;
}

/** The facts of `messages`. */
export function readConversation(messages: readonly Message[]): ConversationFacts {
  let user: Message | undefined;
  for (let i = messages.length - 1; i >= 0 && user === undefined; i--) {
    const m = messages[i]!;
    if (m.role === "user" && m.parts.some((p) => p.type !== "tool_result")) user = m;
  }
  const images = (user?.parts ?? []).filter((p): p is ImagePart => p.type === "image");
  const documents = (user?.parts ?? []).filter((p): p is DocumentPart => p.type === "document");
  const toolResults = endingToolResults(messages);
  return {
    userText: user ? partsText(user.parts) : "",
    userImages: images,
    userDocuments: documents,
    afterTools: hasToolResult(messages[messages.length - 1]),
    toolResults,
    key: conversationKey(messages),
  };
}

/** The text parts of `parts` joined by newlines (other parts left out). */
export function partsText(parts: readonly Part[]): string {
  let text = "";
  let first = true;
  for (const part of parts) {
    if (part.type !== "text") continue;
    text += first ? part.text : `\n${part.text}`;
    first = false;
  }
  return text;
}

/** A tool result's text, and its documents in a few words ("the document ..."). */
function resultText(content: readonly Part[]): string {
  const documents = content.flatMap((p) =>
    p.type === "document" ? [`the document ${documentSummary(p)}`] : []
  );
  return [partsText(content), ...documents].filter((t) => t !== "").join(" and ");
}

function hasToolResult(message: Message | undefined): boolean {
  return message?.parts.some((p) => p.type === "tool_result") ?? false;
}

/** The tool results of the run of messages with tool results at the end, named after the calls
 * of the assistant message before the run. */
function endingToolResults(messages: readonly Message[]): ToolOutcome[] {
  let start = messages.length;
  while (start > 0 && hasToolResult(messages[start - 1])) start--;
  const before = messages[start - 1];
  const names = new Map<string, string>();
  if (before?.role === "assistant") {
    for (const p of before.parts) if (p.type === "tool_call") names.set(p.id, p.name);
  }
  const out: ToolOutcome[] = [];
  for (const message of messages.slice(start)) {
    for (const p of message.parts) {
      if (p.type !== "tool_result") continue;
      out.push({ name: names.get(p.callId) ?? "unknown", content: resultText(p.content) });
    }
  }
  return out;
}

/** A hash of every message's role and parts, chained over their pieces so that no long string
 * is built. */
function conversationKey(messages: readonly Message[]): string {
  let h = fnv1a("");
  const add = (...pieces: string[]) => {
    for (const piece of pieces) h = fnv1a(piece, fnv1a(":", h));
    h = fnv1a("\n", h);
  };
  for (const m of messages) {
    add(m.role);
    for (const p of m.parts) {
      switch (p.type) {
        case "text":
        case "reasoning":
        case "refusal":
          add(p.type, p.text);
          break;
        case "image":
          if (p.source.kind === "data") add("image", String(p.source.base64.length));
          else add("image", p.source.url);
          break;
        case "document":
          add("document", p.title ?? "", documentSize(p));
          break;
        case "tool_call":
          add(p.id, p.name, p.arguments);
          break;
        case "tool_result":
          add(p.callId, partsText(p.content));
          break;
      }
    }
  }
  return h.toString(36);
}

/** A document's size for the key: a PDF's base64 length, a text's length, or its URL. */
function documentSize(part: DocumentPart): string {
  const { source } = part;
  switch (source.kind) {
    case "data":
      return String(source.base64.length);
    case "text":
      return String(source.text.length);
    case "url":
      return source.url;
  }
}
