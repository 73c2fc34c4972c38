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
    ["an index not in plain digits", '{"data":[{"index":0e0,"embedding":"a"}]}', 1],
    ["a negative index", '{"data":[{"index":-0,"embedding":"a"}]}', 1],
    ["an index as a string", '{"data":[{"index":"0","embedding":"a"}]}', 1],
  ];
  for (const [name, text, expected] of cases) {
    assert.equal(pass(text, expected, "m"), null, name);
  }
});

Deno.test("passEmbeddings: the same answer wherever its bytes start in their buffer, with quotes and escapes at every alignment", () => {
  const decoder = new TextDecoder();
  // Vectors and other fields of every length around a word, so that quotes and escaped quotes
  // fall on each of a word's four bytes.
  for (let length = 0; length < 9; length++) {
    const vector = "QUJD".repeat(3).slice(0, length);
    const items = [0, 1, 2].map((index) => ({
      object: "embedding",
      note: `a \\"quoted\\" ${"x".repeat(length)} note`.replaceAll("\\", ""),
      index,
      embedding: vector + "=".repeat(index),
    }));
    const text = JSON.stringify(answer({}, items));
    const expected = pass(text, 3, "gw")?.answer;
    assert.ok(expected !== undefined, `length ${length}`);
    const body = encoder.encode(text);
    for (let offset = 0; offset < 8; offset++) {
      const buffer = new Uint8Array(body.length + 16);
      buffer.set(body, offset);
      const passed = passEmbeddings(buffer.subarray(offset, offset + body.length), 3, "gw");
      assert.ok(passed !== null, `length ${length}, offset ${offset}`);
      assert.equal(passed.answer.map((part) => decoder.decode(part)).join(""), expected);
      assert.deepEqual(
        JSON.parse(expected!).data.map((d: { embedding: string }) => d.embedding),
        items.map((d) => d.embedding),
      );
    }
    // Cut anywhere inside, it is never passed on.
    for (let end = 0; end < body.length; end += 7) {
      assert.equal(passEmbeddings(body.subarray(0, end), 3, "gw"), null);
    }
  }
});
