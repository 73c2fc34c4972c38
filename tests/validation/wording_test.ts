import assert from "node:assert/strict";
import { alternatives, bounded, count, typeName } from "../../src/validation/wording.ts";

Deno.test("typeName names a JSON value's type with its article", () => {
  const cases: [unknown, string][] = [
    ["x", "a string"],
    [1.5, "a number"],
    [Infinity, "a non-finite number"],
    [true, "a boolean"],
    [null, "null"],
    [[], "an array"],
    [{}, "an object"],
    [undefined, "nothing"],
  ];
  for (const [value, name] of cases) assert.equal(typeName(value), name, String(value));
});

Deno.test("alternatives lists allowed values as JSON, the last after 'or'", () => {
  assert.equal(alternatives(["a"]), '"a"');
  assert.equal(alternatives(["a", "b"]), '"a" or "b"');
  assert.equal(alternatives(["a", "b", "c"]), '"a", "b" or "c"');
  assert.equal(alternatives([]), "nothing");
});

Deno.test("bounded names the bounds that bound something", () => {
  assert.equal(bounded("an integer", 1, 10), "an integer from 1 to 10");
  assert.equal(bounded("a number", 0, Infinity), "a number of at least 0");
  assert.equal(bounded("a number", -Infinity, 2), "a number of at most 2");
  assert.equal(bounded("an integer", -Infinity, Number.MAX_SAFE_INTEGER), "an integer");
});

Deno.test("count says 1 item, 2 items", () => {
  assert.equal(count(1, "item"), "1 item");
  assert.equal(count(0, "item"), "0 items");
  assert.equal(count(256, "character"), "256 characters");
});
