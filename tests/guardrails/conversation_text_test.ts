import assert from "node:assert/strict";
import type { Message } from "../../src/canonical/conversation.ts";
import {
  mapMessages,
  messageText,
  replaceMessageTexts,
} from "../../src/guardrails/conversation_text.ts";

const PDF = { kind: "data", mediaType: "application/pdf", base64: "JVBERi0xLjQK" } as const;

const messages: Message[] = [{
  role: "user",
  parts: [
    { type: "text", text: "Summarise these." },
    { type: "document", source: { kind: "text", text: "Call ann@example.com" }, title: "notes" },
    { type: "document", source: PDF, title: "ann@example.com.pdf", context: "from ann" },
    {
      type: "tool_result",
      callId: "c1",
      isError: false,
      content: [{ type: "document", source: { kind: "text", text: "bob@example.com" } }],
    },
  ],
}];

Deno.test("mapMessages reads text documents, and documents' titles and context", () => {
  const seen: string[] = [];
  const mapped = mapMessages(messages, (text) => {
    seen.push(text);
    return text.replaceAll(/\S+@example\.com/g, "[email]");
  });
  assert.deepEqual(seen, [
    "Summarise these.",
    "notes",
    "Call ann@example.com",
    "ann@example.com.pdf",
    "from ann",
    "bob@example.com",
  ]);
  const [text, document, pdf, result] = mapped[0]!.parts;
  assert.equal(text, messages[0]!.parts[0], "unchanged parts are the same objects");
  assert.deepEqual(document, {
    type: "document",
    source: { kind: "text", text: "Call [email]" },
    title: "notes",
  });
  assert.deepEqual(pdf, {
    type: "document",
    source: PDF,
    title: "[email].pdf",
    context: "from ann",
  });
  assert.deepEqual(result, {
    type: "tool_result",
    callId: "c1",
    isError: false,
    content: [{ type: "document", source: { kind: "text", text: "[email]" } }],
  });
  assert.equal(mapMessages(messages, (text) => text), messages, "nothing changed: the same array");
});

Deno.test("messageText and a webhook's replacement take text documents as text", () => {
  assert.equal(
    messageText(messages[0]!),
    "Summarise these.\nCall ann@example.com\nbob@example.com",
  );
  const [replaced] = replaceMessageTexts(messages, ["All clean."]);
  assert.deepEqual(replaced!.parts, [
    { type: "text", text: "All clean." },
    { type: "document", source: PDF, title: "ann@example.com.pdf", context: "from ann" },
    { type: "tool_result", callId: "c1", isError: false, content: [] },
  ]);
});
