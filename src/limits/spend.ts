/**
 * Budgets (DESIGN §4.1, §8): what a key may spend per UTC day and per UTC month, in currency
 * units, counted in micros (pricing.ts) on the ledger (ledger.ts): `["spend", keyId]`.
 */
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { GroupCommit } from "./group_commit.ts";
import { DAY, Ledger, MONTH } from "./ledger.ts";
import { fromMicros } from "./pricing.ts";
import { retryAfterSeconds, type WindowState } from "./windows.ts";

/** A key's budget in currency units (`null`: none). */
export interface Budget {
  per_day?: number | null;
  per_month?: number | null;
}

/** The spend ledger: day and month windows. */
export function spendLedger(deps: { kv: Deno.Kv; clock: Clock; commits: GroupCommit }): Ledger {
  return new Ledger({ ...deps, windows: [DAY, MONTH], refusal });
}

/** The ledger entry of a key's spend. */
export function spendKey(keyId: string): Deno.KvKey {
  return ["spend", keyId];
}

/** A budget as the ledger's limits, in micros. */
export function budgetLimits(budget: Budget): [number | null, number | null] {
  const micros = (v: number | null | undefined) =>
    v === null || v === undefined ? null : Math.round(v * 1_000_000);
  return [micros(budget.per_day), micros(budget.per_month)];
}

function refusal(window: WindowState, micros: number, _subject: string, now: number): ApiError {
  const retryAfter = retryAfterSeconds(window, now);
  const left = Math.max(0, window.remaining + micros);
  return new ApiError(
    429,
    "insufficient_quota",
    `Budget reached: this API key may spend ${fromMicros(window.limit)} per ${window.name}, ${
      fromMicros(left)
    } left, and this request may cost up to ${
      fromMicros(micros)
    } (its prompt plus its maximum output at the model's prices). It resets in ${retryAfter} s.`,
    { code: "insufficient_quota", headers: { "retry-after": String(retryAfter) } },
  );
}
