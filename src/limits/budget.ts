/**
 * A key's budget (DESIGN §4.1, §8): what it may spend per UTC day and per UTC month, in
 * currency units. The spend ledger (spend.ts) counts it in micros (pricing.ts).
 */

/** A key's budget in currency units (`null`: none). */
export interface Budget {
  per_day?: number | null;
  per_month?: number | null;
}

/** A budget as the ledger's limits, in micros. */
export function budgetLimits(budget: Budget): [number | null, number | null] {
  const micros = (v: number | null | undefined) =>
    v === null || v === undefined ? null : Math.round(v * 1_000_000);
  return [micros(budget.per_day), micros(budget.per_month)];
}
