import type { ModelChecks } from "../../log/checks.ts";

/** Decimal places of a hit ratio. */
const RATIO_PLACES = 4;

/**
 * The `models` of `GET /admin/usage`: per model, the response cache's hits, misses and
 * bypasses with the hit ratio (hits over hits and misses; `null` before any lookup), and each
 * guardrail's verdicts (`errors`: it could not decide, failing open or closed) and what it found
 * by type and count.
 */
export function checksView(rows: readonly ModelChecks[]) {
  return rows.map((row) => ({
    model: row.model,
    cache: row.cache === null ? null : {
      hits: row.cache.hit,
      misses: row.cache.miss,
      bypass: row.cache.bypass,
      hit_ratio: ratio(row.cache.hit, row.cache.hit + row.cache.miss),
    },
    guardrails: row.guardrails.map((g) => ({
      name: g.name,
      stage: g.stage,
      ...g.verdicts,
      errors: g.verdicts.failed_open + g.verdicts.failed_closed,
      found: g.found,
    })),
  }));
}

/** `part / whole` rounded to {@link RATIO_PLACES} places, or `null` when `whole` is 0. */
function ratio(part: number, whole: number): number | null {
  if (whole === 0) return null;
  const scale = 10 ** RATIO_PLACES;
  return Math.round(part / whole * scale) / scale;
}
