/** A Gemini API countTokens body as Vertex's CountTokensRequest. */
import assert from "node:assert/strict";
import { toVertexCountTokens } from "../../../src/providers/vertex/count_tokens.ts";
import type { VertexConfig } from "../../../src/config/types.ts";

const VERTEX = { project: "p-1", region: "us-east5" } as VertexConfig;

Deno.test("vertex countTokens: generateContentRequest unwrapped, model the resource name", () => {
  const contents = [{ role: "user", parts: [{ text: "hi" }] }];
  const counted = toVertexCountTokens(
    {
      generateContentRequest: {
        model: "models/gemini-2.5-flash",
        contents,
        systemInstruction: { parts: [{ text: "terse" }] },
        tools: [{ functionDeclarations: [] }],
        generationConfig: { temperature: 0 },
        safetySettings: [],
        cachedContent: "cachedContents/x",
      },
    },
    VERTEX,
    "gemini-2.5-flash",
  );
  assert.deepEqual(counted, {
    model: "projects/p-1/locations/us-east5/publishers/google/models/gemini-2.5-flash",
    contents,
    systemInstruction: { parts: [{ text: "terse" }] },
    tools: [{ functionDeclarations: [] }],
    generationConfig: { temperature: 0 },
  });
});

Deno.test("vertex countTokens: a body of contents is Vertex's already", () => {
  const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
  assert.equal(toVertexCountTokens(body, VERTEX, "gemini-2.5-flash"), body);
});
