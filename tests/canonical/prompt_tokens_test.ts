import assert from "node:assert/strict";
import type { DocumentPart } from "../../src/canonical/conversation.ts";
import { pdfPages, promptTokens } from "../../src/canonical/prompt_tokens.ts";
import { countTokens } from "../../src/canonical/tokens.ts";
import { latin1Base64, pdfBase64 as pdf } from "../support/pdf.ts";
import { chatRequest } from "../support/provider_call.ts";

const tokensOf = (document: DocumentPart) =>
  promptTokens(chatRequest({ messages: [{ role: "user", parts: [document] }] })) -
  promptTokens(chatRequest({ messages: [{ role: "user", parts: [] }] }));

Deno.test("pdfPages counts page objects, not the page tree", () => {
  assert.equal(pdfPages(pdf(1)), 1);
  assert.equal(pdfPages(pdf(7)), 7);
});

Deno.test("pdfPages: compressed pages by size, at least one; unreadable base64 is one", () => {
  const compressed = new Uint8Array(120_000).fill(0x78);
  compressed.set([...("%PDF-1.7\n")].map((c) => c.charCodeAt(0)));
  assert.equal(pdfPages(compressed.toBase64()), 3);
  assert.equal(pdfPages(latin1Base64("%PDF-1.7\n")), 1);
  assert.equal(pdfPages("not base64!"), 1);
});

Deno.test("promptTokens: documents by their text or their pages", () => {
  const text = "The quarterly report says revenue grew by twelve percent.";
  assert.equal(
    tokensOf({ type: "document", source: { kind: "text", text }, title: "Report" }),
    countTokens(text) + countTokens("Report"),
  );
  const pages = (n: number) =>
    tokensOf({
      type: "document",
      source: { kind: "data", mediaType: "application/pdf", base64: pdf(n) },
    });
  assert.equal(pages(2), 3_000);
  assert.equal(pages(10), 15_000);
  assert.equal(
    tokensOf({ type: "document", source: { kind: "url", url: "https://x.test/a.pdf" } }),
    1_500,
  );
  // In a tool result as well.
  const result = promptTokens(chatRequest({
    messages: [{
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c1",
        isError: false,
        content: [{
          type: "document",
          source: { kind: "data", mediaType: "application/pdf", base64: pdf(4) },
        }],
      }],
    }],
  }));
  assert.ok(result >= 6_000, String(result));
});
