import assert from "node:assert/strict";
import type { ReasoningPart } from "../../../src/canonical/conversation.ts";
import {
  decodeReasoning,
  encodeReasoning,
  ENVELOPE_PREFIX,
  OPENAI_RESPONSES_STYLE,
} from "../../../src/api/responses/reasoning_envelope.ts";

Deno.test("every reasoning part comes back from its envelope as it was", () => {
  const parts: ReasoningPart[] = [
    { type: "reasoning", text: "Thinking about Paris", signature: "c2ln+/=", style: "anthropic" },
    { type: "reasoning", text: "", redacted: "EmwKAhgBEgy…", style: "anthropic" },
    { type: "reasoning", text: "plain, no style" },
    { type: "reasoning", text: "ünïcødé 🌧 and \u2028 line separators", style: "simulator" },
    { type: "reasoning", text: "x".repeat(100_000), signature: "s" },
  ];
  for (const part of parts) {
    const envelope = encodeReasoning(part);
    assert.ok(envelope.startsWith(ENVELOPE_PREFIX));
    assert.match(envelope.slice(ENVELOPE_PREFIX.length), /^[A-Za-z0-9_-]*$/);
    assert.deepEqual(decodeReasoning(envelope, "ignored summary"), part);
  }
});

Deno.test("an upstream's own encrypted content is kept whole, tagged as OpenAI's", () => {
  assert.deepEqual(decodeReasoning("gAAAAABopaque==", "the summary"), {
    type: "reasoning",
    text: "the summary",
    redacted: "gAAAAABopaque==",
    style: OPENAI_RESPONSES_STYLE,
  });
});

Deno.test("an envelope that does not decode is refused", () => {
  for (
    const bad of [
      `${ENVELOPE_PREFIX}!!!`,
      `${ENVELOPE_PREFIX}${btoa("not json")}`,
      `${ENVELOPE_PREFIX}${btoa(JSON.stringify({ text: 3 }))}`,
      `${ENVELOPE_PREFIX}${btoa(JSON.stringify({ text: "a", signature: 5 }))}`,
      `${ENVELOPE_PREFIX}${btoa(JSON.stringify(["text"]))}`,
    ]
  ) assert.equal(decodeReasoning(bad, ""), null, bad);
});
