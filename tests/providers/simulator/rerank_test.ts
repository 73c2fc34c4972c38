import assert from "node:assert/strict";
import { lexicalScores, simulateRerank, words } from "../../../src/providers/simulator/rerank.ts";
import { callContext } from "../../support/provider_call.ts";

const DOCS = [
  "Berlin is the capital of Germany.",
  "Paris is the capital of France, and France is in Europe.",
  "The Eiffel Tower stands in Paris.",
  "Horses and cows are both animals.",
];

Deno.test("words: the tokenizer's word tokens, lower-cased, punctuation left out", () => {
  assert.deepEqual(words("The  Capital, of FRANCE?"), ["the", "capital", "of", "france"]);
  assert.deepEqual(words("?!"), []);
});

Deno.test("lexicalScores: more of the query's rarer words scores higher, all in [0, 1)", () => {
  const scores = lexicalScores("What is the capital of France?", DOCS);
  assert.equal(scores.length, DOCS.length);
  for (const s of scores) assert.ok(s >= 0 && s < 1, String(s));
  const [berlin, paris, tower, animals] = scores as [number, number, number, number];
  assert.ok(paris > berlin, `${paris} > ${berlin}`);
  assert.ok(berlin > tower, `${berlin} > ${tower}`);
  assert.equal(animals, 0);
  // Case and punctuation do not matter; the same request scores the same.
  assert.deepEqual(lexicalScores("what IS the capital of france", DOCS), scores);
  assert.deepEqual(lexicalScores("What is the capital of France?", DOCS), scores);
});

Deno.test("lexicalScores: a query without words, and equal documents, score alike", () => {
  assert.deepEqual(lexicalScores("?", ["a b", "c"]), [0, 0]);
  const [a, b] = lexicalScores("red apple", ["a red apple", "a red apple"]);
  assert.equal(a, b);
});

Deno.test("simulateRerank: a score per document by index; tokens are the query once a document plus the documents", async () => {
  const result = await simulateRerank(
    {
      model: "m",
      query: "red apple",
      documents: ["a red apple", "pears"],
      top_n: 1,
      return_documents: false,
    },
    callContext(),
  );
  assert.deepEqual(result.scores.map((s) => s.index), [0, 1]);
  assert.ok(result.scores[0]!.score > result.scores[1]!.score);
  // "red apple" is 2 tokens, "a red apple" 3, "pears" 1.
  assert.equal(result.tokens, 2 * 2 + 3 + 1);
  const ctx = callContext();
  ctx.abort.abort();
  await assert.rejects(
    () =>
      simulateRerank({
        model: "m",
        query: "q",
        documents: ["d"],
        top_n: null,
        return_documents: false,
      }, ctx),
    { status: 499 },
  );
});
