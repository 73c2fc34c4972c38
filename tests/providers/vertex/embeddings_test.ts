/** Vertex's text embedding calls: how inputs are split into `:predict` calls, the body, and
 * the answer read (vectors and token counts). */
import assert from "node:assert/strict";
import {
  embeddingCalls,
  instancesPerCall,
  readVertexEmbeddings,
  toVertexEmbedBody,
} from "../../../src/providers/vertex/embeddings.ts";
import type { EmbeddingRequest } from "../../../src/types/openai.ts";

const REQUEST: EmbeddingRequest = {
  model: "m",
  input: [],
  encoding_format: "float",
  dimensions: null,
  user: null,
  task_type: null,
};

Deno.test("vertex embeddings: 250 instances a call, one for gemini-embedding models", () => {
  assert.equal(instancesPerCall("text-embedding-005"), 250);
  assert.equal(instancesPerCall("text-multilingual-embedding-002"), 250);
  assert.equal(instancesPerCall("gemini-embedding-001"), 1);
  const texts = Array.from({ length: 501 }, (_, i) => `t${i}`);
  const calls = embeddingCalls(texts, 250);
  assert.deepEqual(calls.map((c) => c.length), [250, 250, 1]);
  assert.deepEqual(calls.flat(), texts);
  assert.deepEqual(embeddingCalls(["a", "b"], 1), [["a"], ["b"]]);
});

Deno.test("vertex embeddings: a call stays under 20,000 tokens; a longer text goes alone", () => {
  const long = "word ".repeat(30_000);
  const half = "word ".repeat(12_000);
  const calls = embeddingCalls(["a", half, half, long, "b"], 250);
  assert.deepEqual(calls.map((c) => c.length), [2, 1, 1, 1]);
  assert.deepEqual(calls.flat(), ["a", half, half, long, "b"]);
});

Deno.test("vertex embeddings: the body carries task_type per instance and dimensions as a parameter", () => {
  assert.deepEqual(toVertexEmbedBody(["a"], REQUEST), { instances: [{ content: "a" }] });
  assert.deepEqual(
    toVertexEmbedBody(["a", "b"], { ...REQUEST, dimensions: 64, task_type: "RETRIEVAL_QUERY" }),
    {
      instances: [
        { content: "a", task_type: "RETRIEVAL_QUERY" },
        { content: "b", task_type: "RETRIEVAL_QUERY" },
      ],
      parameters: { outputDimensionality: 64 },
    },
  );
});

Deno.test("vertex embeddings: the answer's vectors and token counts; a wrong answer is a 502", () => {
  const answer = {
    predictions: [
      { embeddings: { statistics: { truncated: false, token_count: 3 }, values: [0.1, 0.2] } },
      { embeddings: { statistics: { truncated: false, tokenCount: 2 }, values: [0.3, 0.4] } },
      { embeddings: { values: [0.5, 0.6] } },
    ],
    metadata: { billableCharacterCount: 20 },
  };
  const read = readVertexEmbeddings(answer, ["one two three", "four five", "abcdefgh"]);
  assert.deepEqual(read.vectors, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]);
  assert.equal(read.tokens, 3 + 2 + 1, "the third estimated from its text (one word)");
  assert.throws(() => readVertexEmbeddings(answer, ["a"]), /expected 1 predictions/);
  assert.throws(
    () => readVertexEmbeddings({ predictions: [{ embeddings: { values: "no" } }] }, ["a"]),
    /predictions\[0\]\.embeddings\.values is not a vector/,
  );
});
