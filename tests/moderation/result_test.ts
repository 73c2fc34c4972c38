import assert from "node:assert/strict";
import { MODERATION_CATEGORIES } from "../../src/config/types.ts";
import {
  finalizeResult,
  liftParents,
  normalizeCategories,
  zeroScores,
} from "../../src/moderation/result.ts";

/** An OpenAI omni-moderation result: 13 categories and `category_applied_input_types`. */
const OMNI = {
  flagged: true,
  categories: {
    sexual: false,
    "sexual/minors": false,
    harassment: false,
    "harassment/threatening": false,
    hate: false,
    "hate/threatening": false,
    illicit: true,
    "illicit/violent": true,
    "self-harm": false,
    "self-harm/intent": false,
    "self-harm/instructions": false,
    violence: true,
    "violence/graphic": false,
  },
  category_scores: {
    sexual: 0.0001,
    "sexual/minors": 0.00001,
    harassment: 0.02,
    "harassment/threatening": 0.01,
    hate: 0.003,
    "hate/threatening": 0.0004,
    illicit: 0.95,
    "illicit/violent": 0.9,
    "self-harm": 0.0002,
    "self-harm/intent": 0.0001,
    "self-harm/instructions": 0.0001,
    violence: 0.88,
    "violence/graphic": 0.04,
  },
  category_applied_input_types: { violence: ["text"] },
};

Deno.test("normalizeCategories drops extra categories and keeps the 11 in the spec's order", () => {
  const { categories, category_scores } = normalizeCategories(OMNI);
  assert.deepEqual(Object.keys(categories), [...MODERATION_CATEGORIES]);
  assert.deepEqual(Object.keys(category_scores), [...MODERATION_CATEGORIES]);
  assert.equal(categories.violence, true);
  assert.equal(category_scores.violence, 0.88);
  assert.equal(category_scores.harassment, 0.02);
  assert.ok(!("illicit" in categories) && !("illicit" in category_scores));
});

Deno.test("normalizeCategories fills a missing category with false / 0 and cleans bad values", () => {
  const { categories, category_scores } = normalizeCategories({
    categories: { hate: true, violence: "yes", sexual: 1 },
    category_scores: { hate: 1.7, violence: -0.2, sexual: "0.9", harassment: Number.NaN },
  });
  assert.equal(categories.hate, true);
  assert.equal(categories.violence, false);
  assert.equal(categories.sexual, false);
  assert.equal(categories["self-harm"], false);
  assert.deepEqual(
    [
      category_scores.hate,
      category_scores.violence,
      category_scores.sexual,
      category_scores.harassment,
    ],
    [1, 0, 0, 0],
  );
  assert.deepEqual(normalizeCategories({}), {
    categories: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, false])),
    category_scores: zeroScores(),
  });
});

Deno.test("finalizeResult: thresholds override, given flags stay, flagged iff a category is", () => {
  const kept = finalizeResult(OMNI);
  assert.equal(kept.flagged, true);
  assert.equal(kept.categories.violence, true);
  // A threshold above the score unflags violence; nothing else is flagged, so flagged is false.
  const strict = finalizeResult(OMNI, { violence: 0.9 });
  assert.equal(strict.categories.violence, false);
  assert.equal(strict.flagged, false);
  // A low threshold flags a category the upstream did not.
  const loose = finalizeResult(OMNI, { harassment: 0.01 });
  assert.equal(loose.categories.harassment, true);
  // Thresholds are inclusive.
  assert.equal(finalizeResult(OMNI, { violence: 0.88 }).categories.violence, true);
});

Deno.test("finalizeResult without flags: the default threshold 0.5", () => {
  const scores = { ...zeroScores(), hate: 0.5, sexual: 0.49 };
  const result = finalizeResult({ category_scores: scores });
  assert.equal(result.categories.hate, true);
  assert.equal(result.categories.sexual, false);
  assert.equal(result.flagged, true);
  assert.equal(finalizeResult({ category_scores: zeroScores() }).flagged, false);
});

Deno.test("liftParents: a subcategory's score lifts its parent", () => {
  const scores = liftParents({
    ...zeroScores(),
    "self-harm/instructions": 0.8,
    "hate/threatening": 0.3,
    hate: 0.6,
  });
  assert.equal(scores["self-harm"], 0.8);
  assert.equal(scores.hate, 0.6);
  assert.equal(scores.violence, 0);
});
