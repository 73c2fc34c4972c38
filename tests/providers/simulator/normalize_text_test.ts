import assert from "node:assert/strict";
import { canonicalText } from "../../../src/providers/simulator/normalize_text.ts";

Deno.test("canonicalText folds case, accents and look-alike letters", () => {
  assert.equal(canonicalText("Héllo, WÖRLD!"), "hello world");
  assert.equal(canonicalText("Кill уou"), "kill you"); // Cyrillic К and у
});

Deno.test("canonicalText reads l33t inside words but leaves numbers alone", () => {
  assert.equal(canonicalText("k1ll y0u!!!"), "kill you");
  assert.equal(canonicalText("h4te $peech"), "hate speech");
  assert.equal(
    canonicalText("I have 5 apples and 24/7 support"),
    "i have 5 apples and 24 7 support",
  );
});

Deno.test("canonicalText joins words split by punctuation or spaces", () => {
  assert.equal(canonicalText("k.i.l.l"), "kill");
  assert.equal(canonicalText("k-i-l-l them"), "kill them");
  assert.equal(canonicalText("k i l l you"), "kill you");
  assert.equal(canonicalText("self-harm"), "selfharm");
  assert.equal(canonicalText("don't"), "dont");
  assert.equal(canonicalText("ki\u200bll"), "kill"); // zero-width space
  // One or two single letters stay words.
  assert.equal(canonicalText("a b test"), "a b test");
});

Deno.test("canonicalText keeps sentence punctuation out of words, also around long ones", () => {
  assert.equal(canonicalText('"k1ll!" (y0u)...'), "kill you");
  assert.equal(canonicalText("“k1ll” ‘y0u’"), "kill you");
  // Runs of 100 000 (once quadratic: 10 s each).
  const run = "!".repeat(100_000);
  assert.equal(canonicalText("a" + run + "x"), "a" + "i".repeat(100_000) + "x");
  assert.equal(canonicalText("a" + run), "a");
  assert.equal(canonicalText("(".repeat(100_000) + "k1ll"), "kill");
});
