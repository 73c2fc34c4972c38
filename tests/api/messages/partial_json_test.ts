import assert from "node:assert/strict";
import { parsePartialObject } from "../../../src/api/messages/partial_json.ts";
import { toolInput } from "../../../src/api/messages/response.ts";

Deno.test("parsePartialObject: a JSON object cut short reads as the SDKs read a streamed tool_use", () => {
  const cases: [string, unknown][] = [
    ['{"city":"', {}],
    ['{"city":"Par', {}],
    ['{"city"', {}],
    ['{"city":', {}],
    ['{"a":"x","b":[1,', { a: "x", b: [1] }],
    ['{"a":"x","b":[1,2', { a: "x", b: [1] }], // a number at the end may lack digits
    ['{"a":true', { a: true }],
    ['{"a":tru', {}],
    ['{"a":{"b":[{"c":"d\\"e"},{"f', { a: { b: [{ c: 'd"e' }, {}] } }],
    ['{"a":["x","y', { a: ["x"] }],
    ["{", {}],
    [' { "a" : 1 , "b" : "c" ', { a: 1, b: "c" }],
  ];
  for (const [text, value] of cases) assert.deepEqual(parsePartialObject(text), value, text);
  // Not the start of a JSON object: nothing to read.
  for (const text of ['{"a":xyz', '{"a":[1}', '{"a":1}}', "[1,2", '"text']) {
    assert.equal(parsePartialObject(text), undefined, text);
  }
});

Deno.test("toolInput: arguments cut short are completed; broken JSON is kept under _raw", () => {
  assert.deepEqual(toolInput('{"city":"Paris"}'), { city: "Paris" });
  assert.deepEqual(toolInput(""), {});
  assert.deepEqual(toolInput('{"city":"Paris","zone":"Eu'), { city: "Paris" });
  assert.deepEqual(toolInput('{"city": Paris}'), { _raw: '{"city": Paris}' });
});
