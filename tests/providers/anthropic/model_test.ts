import assert from "node:assert/strict";
import { anthropicModelTraits } from "../../../src/providers/anthropic/model.ts";

Deno.test("anthropicModelTraits reads the Claude version from the model id", () => {
  const traits = (id: string) => {
    const t = anthropicModelTraits(id);
    return `${t.thinking} ${t.structuredOutputs ? "so" : "-"} ${t.fixedSampling ? "fixed" : "-"}`;
  };
  assert.deepEqual(
    [
      "claude-3-haiku-20240307",
      "claude-3-5-haiku-latest",
      "claude-3-7-sonnet-20250219",
      "claude-sonnet-4-20250514",
      "claude-opus-4-1-20250805",
      "claude-haiku-4-5",
      "anthropic.claude-sonnet-4-5-20250929-v1:0",
      "claude-opus-4-6",
      "claude-sonnet-4.6",
      "claude-opus-4-7",
      "claude-sonnet-5",
      "my-alias",
    ].map(traits),
    [
      "none - -",
      "none - -",
      "budget - -",
      "budget - -",
      "budget - -",
      "budget so -",
      "budget so -",
      "budget so -",
      "budget so -",
      "adaptive so fixed",
      "adaptive so fixed",
      "budget - -",
    ],
  );
});
