import { MODERATION_CATEGORIES, type ModerationCategory } from "../config/types.ts";
import type { ModerationResult } from "../types/openai.ts";

/** A score for each of the spec's 11 categories. */
export type CategoryScores = Record<ModerationCategory, number>;
/** A flag for each of the spec's 11 categories. */
export type CategoryFlags = Record<ModerationCategory, boolean>;

/** The score at or above which a category is flagged when the model sets no threshold. */
export const DEFAULT_THRESHOLD = 0.5;

/** Each parent category and its subcategories (a subcategory's score lifts its parent's). */
export const SUBCATEGORIES: Partial<Record<ModerationCategory, ModerationCategory[]>> = {
  sexual: ["sexual/minors"],
  hate: ["hate/threatening"],
  harassment: ["harassment/threatening"],
  "self-harm": ["self-harm/intent", "self-harm/instructions"],
  violence: ["violence/graphic"],
};

const clamp01 = (v: number) => (v > 1 ? 1 : v >= 0 ? v : 0);

/** A score from an untrusted value: finite numbers clamped to [0, 1], anything else 0. */
function score(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? clamp01(value) : 0;
}

/** All 11 categories at score 0. */
export function zeroScores(): CategoryScores {
  return Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, 0])) as CategoryScores;
}

/**
 * An upstream's `categories` and `category_scores` reduced to exactly the spec's 11 keys in the
 * spec's order: extra categories (such as OpenAI's `illicit`) are dropped, a missing one is
 * false / 0, scores are clamped to [0, 1], and anything that is not a boolean flag is false.
 */
export function normalizeCategories(
  upstream: { categories?: unknown; category_scores?: unknown },
): { categories: CategoryFlags; category_scores: CategoryScores } {
  const flags = isRecord(upstream.categories) ? upstream.categories : {};
  const scores = isRecord(upstream.category_scores) ? upstream.category_scores : {};
  const categories = {} as CategoryFlags;
  const category_scores = {} as CategoryScores;
  for (const c of MODERATION_CATEGORIES) {
    categories[c] = flags[c] === true;
    category_scores[c] = score(scores[c]);
  }
  return { categories, category_scores };
}

/**
 * The result the client sees: exactly the 11 keys in both objects; a category whose threshold
 * the model configures is flagged iff its score reaches it, any other keeps the given flag (or,
 * with no flags given, is flagged at {@link DEFAULT_THRESHOLD}); `flagged` iff some category is.
 */
export function finalizeResult(
  result: { category_scores: unknown; categories?: unknown },
  thresholds: Partial<Record<ModerationCategory, number>> = {},
): ModerationResult {
  const given = result.categories !== undefined;
  const { categories, category_scores } = normalizeCategories(result);
  let flagged = false;
  for (const c of MODERATION_CATEGORIES) {
    const threshold = thresholds[c];
    if (threshold !== undefined) categories[c] = category_scores[c] >= threshold;
    else if (!given) categories[c] = category_scores[c] >= DEFAULT_THRESHOLD;
    flagged ||= categories[c];
  }
  return { flagged, categories, category_scores };
}

/** Lifts each parent category's score to at least its subcategories' (in place). */
export function liftParents(scores: CategoryScores): CategoryScores {
  for (const [parent, children] of Object.entries(SUBCATEGORIES)) {
    for (const child of children) {
      const p = parent as ModerationCategory;
      scores[p] = Math.max(scores[p], scores[child]);
    }
  }
  return scores;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
