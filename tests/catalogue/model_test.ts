import assert from "node:assert/strict";
import { allowListMatches, globMatches } from "../../src/catalogue/model.ts";

Deno.test("globMatches: `*` is any characters, everything else is itself", () => {
  const cases: [string, string, boolean][] = [
    ["gpt-4o", "gpt-4o", true],
    ["gpt-4o", "gpt-4o-mini", false],
    ["*", "", true],
    ["*", "anything", true],
    ["gpt-*", "gpt-4o", true],
    ["gpt-*", "gpt-", true],
    ["gpt-*", "xgpt-4o", false],
    ["*-mini", "gpt-4o-mini", true],
    ["*-mini", "gpt-4o-mini-x", false],
    ["gpt-*-mini", "gpt-4o-mini", true],
    ["gpt-*-mini", "gpt-mini", false],
    ["a*a", "a", false],
    ["a*a", "aa", true],
    ["*a*b*", "xaxbx", true],
    ["*b*a*", "xaxbx", false],
    ["a*b*c", "abcbc", true],
    ["a**b", "ab", true],
    ["gpt.4", "gpt-4", false],
    ["x?[y]+", "x?[y]+", true],
    ["x?", "xy", false],
  ];
  for (const [glob, id, expected] of cases) {
    assert.equal(globMatches(glob, id), expected, `${glob} ~ ${id}`);
  }
});

Deno.test("allowListMatches: null allows all; else any id or glob of the list", () => {
  assert.equal(allowListMatches(null, "m"), true);
  assert.equal(allowListMatches([], "m"), false);
  assert.equal(allowListMatches(["a", "sim-*"], "sim-chat"), true);
  assert.equal(allowListMatches(["a", "sim-*"], "b"), false);
  // Hung the process as a RegExp.
  assert.equal(allowListMatches(["*a".repeat(10) + "*b"], "a".repeat(100)), false);
});

Deno.test("globMatches: the work is at most the glob's length plus the id's", () => {
  const cases: [string, (n: number) => string][] = [
    ["*a".repeat(10) + "*b", (n) => "a".repeat(n)],
    ["*a".repeat(10) + "*b", (n) => "a".repeat(n) + "b"],
    ["*ab*ab*ab*c", (n) => "ab".repeat(n / 2)],
    ["x*" + "ab".repeat(20) + "*y", (n) => "x" + "ab".repeat(n / 2) + "y"],
  ];
  for (const [glob, make] of cases) {
    const steps = (n: number) => {
      const counter = { steps: 0 };
      globMatches(glob, make(n), counter);
      assert.ok(counter.steps <= glob.length + make(n).length, `${glob}: ${counter.steps}`);
      return counter.steps;
    };
    assert.ok(steps(10_000) <= 12 * steps(1_000), glob);
  }
});
