import assert from "node:assert/strict";
import { countTokens, takeTokens } from "../../src/canonical/tokens.ts";
import fc from "npm:fast-check@4.10.2";

Deno.test("tokens are words or single other characters, with the whitespace before them", () => {
  const text = "Hello, wörld!  640 × 480\tpx 😀👍 ";
  const { tokens, more } = takeTokens(text);
  assert.deepEqual(tokens, [
    "Hello",
    ",",
    " wörld",
    "!",
    "  640",
    " ×",
    " 480",
    "\tpx",
    " 😀",
    "👍",
    " ",
  ]);
  assert.equal(more, false);
  assert.equal(tokens.join(""), text);
  assert.equal(countTokens(text), tokens.length);
  assert.equal(countTokens(""), 0);
  assert.deepEqual(takeTokens(""), { tokens: [], more: false });
});

Deno.test("takeTokens stops at the limit and says whether more follow", () => {
  assert.deepEqual(takeTokens("a b c d", 2), { tokens: ["a", " b"], more: true });
  assert.deepEqual(takeTokens("a b", 2), { tokens: ["a", " b"], more: false });
});

Deno.test("tokens of long runs: one per word or whitespace run, one per other character", () => {
  const n = 100_000;
  assert.deepEqual(takeTokens(" ".repeat(n)).tokens, [" ".repeat(n)]);
  assert.deepEqual(takeTokens("a".repeat(n) + " ".repeat(n)).tokens, [
    "a".repeat(n),
    " ".repeat(n),
  ]);
  assert.equal(countTokens("!".repeat(n)), n);
  assert.equal(countTokens(" !".repeat(n)), n);
});

Deno.test("countTokens counts what takeTokens takes, for any text (generated)", () => {
  const pieces = [
    "a",
    "Z",
    "é",
    "ж",
    "中",
    "7",
    "٣",
    "_",
    " ",
    "\t",
    "\n",
    "\u00a0",
    "\u2003",
    "\u3000",
    "\ufeff",
    ",",
    "×",
    "→",
    "😀",
    "𝒜",
    "\ud800",
    "\udc00",
    "\u0301",
  ];
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary" }),
        // ASCII only: counted two characters a step, every pair of kinds.
        fc.string({ unit: "binary-ascii", maxLength: 60 }),
        fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join("")),
      ),
      (text) => countTokens(text) === takeTokens(text).tokens.length,
    ),
    { numRuns: 5000 },
  );
});
