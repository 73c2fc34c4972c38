import assert from "node:assert/strict";
import { passEmbeddings } from "../../../src/providers/openai/embedding_pass.ts";

const encoder = new TextEncoder();

/** The answer for `text` as one string, or `null`. */
function pass(text: string, expected: number, model: string) {
  const bytes = encoder.encode(text);
  const passed = passEmbeddings(bytes, expected, model);
  if (passed === null) return null;
  const decoder = new TextDecoder();
  return {
    answer: passed.answer.map((part) => decoder.decode(part)).join(""),
    promptTokens: passed.promptTokens,
    parts: passed.answer,
    bytes,
  };
}

const VECTORS = ["AACAPwAAAEA=", "AABAQAAAgEA=", "AACgQAAAwEA="];

const ITEMS: unknown[] = VECTORS.map((embedding, index) => ({
  object: "embedding",
  index,
  embedding,
}));

function answer(extra: Record<string, unknown> = {}, data: unknown[] = ITEMS) {
  return {
    object: "list",
    data,
    model: "text-embedding-3-small",
    usage: { prompt_tokens: 9, total_tokens: 9 },
    ...extra,
  };
}

Deno.test("passEmbeddings: OpenAI's shape around the data as written, with the gateway's model and the usage", () => {
  const text = JSON.stringify(answer({ id: "embd-1", created: 1 }));
  const passed = pass(text, 3, "gw-embed");
  assert.ok(passed);
  assert.equal(passed.promptTokens, 9);
  assert.deepEqual(JSON.parse(passed.answer), {
    object: "list",
    data: answer().data,
    model: "gw-embed",
    usage: { prompt_tokens: 9, total_tokens: 9 },
  });
  const dataText = text.slice(text.indexOf("["), text.indexOf("]") + 1);
  assert.ok(passed.answer.includes(dataText), "the data array's text is the upstream's");
  assert.equal(passed.parts[1]!.buffer, passed.bytes.buffer, "its bytes, not a copy");
});

Deno.test("passEmbeddings: whitespace, other key orders, escapes and items without an index", () => {
  const pretty = JSON.stringify(
    {
      usage: { prompt_tokens: 4 },
      model: 'a "quoted" model',
      data: [{ embedding: 'with \\"escape\\" \\\\', object: "embedding" }, {
        index: 1,
        embedding: "x",
      }],
    },
    null,
    2,
  );
  const passed = pass(pretty, 2, "m");
  assert.ok(passed);
  const parsed = JSON.parse(passed.answer);
  assert.equal(parsed.data[0].embedding, 'with \\"escape\\" \\\\');
  assert.equal(parsed.model, "m");
  assert.deepEqual(parsed.usage, { prompt_tokens: 4, total_tokens: 4 });
});

Deno.test("passEmbeddings: what it does not pass on is null, to be parsed instead", () => {
  const cases: [string, string, number][] = [
    [
      "floats",
      JSON.stringify(answer({}, [{ object: "embedding", index: 0, embedding: [0.1] }])),
      1,
    ],
    [
      "out of order",
      JSON.stringify(answer({}, [
        { index: 1, embedding: "a" },
        { index: 0, embedding: "b" },
      ])),
      2,
    ],
    ["too few", JSON.stringify(answer()), 4],
    ["too many", JSON.stringify(answer()), 2],
    ["no data", JSON.stringify({ object: "list", model: "m" }), 0],
    ["cut short", JSON.stringify(answer()).slice(0, 60), 3],
    ["trailing text", JSON.stringify(answer()) + " x", 3],
    ["not an object", "[1,2,3]", 3],
    ["an escaped key", '{"da\\u0074a":[]}', 0],
  ];
  for (const [name, text, expected] of cases) {
    assert.equal(pass(text, expected, "m"), null, name);
  }
});
