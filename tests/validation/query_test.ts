import assert from "node:assert/strict";
import { ValidationError } from "../../src/validation/error.ts";
import { pageLimit, queryFields } from "../../src/validation/query.ts";
import { OPTIONAL } from "../../src/validation/reader.ts";

/** The error `read` throws (a ValidationError), or fails. */
function refusal(read: () => unknown): ValidationError {
  try {
    read();
  } catch (e) {
    assert.ok(e instanceof ValidationError, String(e));
    return e;
  }
  assert.fail("no error");
}

Deno.test("queryFields: first values read; unknown and repeated parameters refused by done()", () => {
  const q = queryFields(new URLSearchParams("a=1&b=2"));
  assert.equal(q.string("a"), "1");
  assert.equal(q.string("c", OPTIONAL), undefined);
  assert.equal(refusal(() => q.done()).code, "unknown_parameter");
  const repeated = queryFields(new URLSearchParams("limit=1&limit=2"));
  assert.equal(repeated.string("limit"), "1");
  const error = refusal(() => repeated.done());
  assert.equal(error.param, "limit");
  assert.match(error.message, /expected one value, but got 2/);
  const allowed = queryFields(new URLSearchParams("include[]=a&include[]=b"), ["include[]"]);
  allowed.optional("include[]");
  allowed.done();
});

Deno.test("pageLimit: 1 to max, the fallback when absent, a 400 naming the parameter else", () => {
  assert.equal(pageLimit("limit", undefined, 100, 20), 20);
  assert.equal(pageLimit("limit", "100", 100, 20), 100);
  for (const text of ["0", "101", "1.5", "-1", "x", ""]) {
    const error = refusal(() => pageLimit("limit", text, 100, 20));
    assert.equal(error.param, "limit");
    assert.match(error.message, /expected an integer from 1 to 100/);
  }
});
