import assert from "node:assert/strict";
import { countTokens, takeTokens } from "../../src/canonical/tokens.ts";

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
