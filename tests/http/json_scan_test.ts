import assert from "node:assert/strict";
import { concatBytes } from "../../src/http/bytes.ts";
import { JsonScan, withTopLevelString } from "../../src/http/json_scan.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function replaced(text: string, value = "up-model"): string | null {
  const parts = withTopLevelString(encoder.encode(text), "model", value);
  return parts === null ? null : decoder.decode(concatBytes(parts));
}

Deno.test("withTopLevelString: the top-level string set, every other byte as it was written", () => {
  const text =
    '{ "messages": [{"role": "user", "model": "inner", "content": "say \\"model\\": x"}],\n' +
    '  "model" :  "claude-gw" , "stream": true, "tools": {"model": 1} }';
  const out = replaced(text)!;
  assert.equal(out, text.replace('"claude-gw"', '"up-model"'));
  const parsed = JSON.parse(out);
  assert.equal(parsed.model, "up-model");
  assert.equal(parsed.messages[0].model, "inner");
  assert.deepEqual(parsed.tools, { model: 1 });
  // Scalars last, before the object's end, with and without spaces.
  assert.equal(replaced('{"model":"a","n":1}'), '{"model":"up-model","n":1}');
  assert.equal(
    replaced('{"n":true,"model":"a","x":[1,{"y":null}]}'),
    '{"n":true,"model":"up-model","x":[1,{"y":null}]}',
  );
  assert.equal(replaced('{"model":"a","s":"}"}'), '{"model":"up-model","s":"}"}');
  // A value that needs escaping is written as JSON.
  assert.equal(JSON.parse(replaced('{"model":"a"}', 'us."x"\\y')!).model, 'us."x"\\y');
});

Deno.test("withTopLevelString: anything it does not pass on is null, to be written anew", () => {
  for (
    const text of [
      '{"model": 1}',
      '{"model": "a", "model": "b"}',
      '{"messages": []}',
      "[]",
      "{}",
      '{"mod\\u0065l": "a"}',
      '{"model": "a"',
      '{"model": "a"} x',
    ]
  ) {
    assert.equal(replaced(text), null, text);
  }
});

Deno.test("withTopLevelString: the same object as JSON.parse reads, for bodies of every shape (generated)", () => {
  const values = [null, true, 12.5e3, -0, 'x\u2192\ud83d\ude00\n"\\', [], {}, [{ model: "n" }], {
    a: [1, { b: "c" }],
  }];
  for (let seed = 0; seed < 300; seed++) {
    const body: Record<string, unknown> = {};
    const keys = ["messages", "model", "stream", "tools", "metadata", "x"];
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(seed + i * 7) % keys.length]!;
      body[key] = key === "model" ? `m${seed}` : values[(seed * 3 + i) % values.length];
    }
    if (!("model" in body)) body.model = "m";
    const spaced = JSON.stringify(body, null, seed % 3);
    for (const offset of [0, 1, 2, 3]) {
      const bytes = new Uint8Array(encoder.encode(spaced).length + offset);
      bytes.set(encoder.encode(spaced), offset);
      const parts = withTopLevelString(bytes.subarray(offset), "model", "up");
      assert.ok(parts !== null, spaced);
      assert.deepEqual(JSON.parse(decoder.decode(concatBytes(parts))), {
        ...JSON.parse(spaced),
        model: "up",
      });
    }
  }
});

Deno.test("JsonScan.quoteFrom finds the first quote as indexOf does, at every offset and alignment (generated)", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const backing = new Uint8Array(400);
  for (let round = 0; round < 200; round++) {
    for (let i = 0; i < backing.length; i++) {
      // Mostly letters; quotes now and then, more often in some rounds; bytes one off a quote.
      const r = random();
      backing[i] = r < 0.01 + (round % 5) * 0.01
        ? 0x22
        : r < 0.05
        ? 0x21 + (r < 0.03 ? 2 : 0)
        : 0x61;
    }
    const start = round % 8;
    const bytes = backing.subarray(start, start + 50 + Math.floor(random() * 340));
    const scan = new JsonScan(bytes);
    for (let from = 0; from <= bytes.length; from++) {
      assert.equal(scan.quoteFrom(from), bytes.indexOf(0x22, from), `round ${round}, from ${from}`);
    }
  }
});
