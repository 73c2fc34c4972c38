/**
 * The spend ledger (DESIGN §4.1, §8): what keys spent per UTC day and per UTC month against
 * their budgets (budget.ts), counted in micros (pricing.ts) on the ledger (ledger.ts):
 * `["spend", keyId]`.
 */
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { GroupCommit } from "./group_commit.ts";
import { DAY, Ledger, MONTH } from "./ledger.ts";
import { fromMicros } from "./pricing.ts";
import { retryAfterSeconds, type WindowState } from "./windows.ts";

/** The spend ledger: day and month windows. */
export function spendLedger(deps: { kv: Deno.Kv; clock: Clock; commits: GroupCommit }): Ledger {
  return new Ledger({ ...deps, windows: [DAY, MONTH], refusal });
}

/** The ledger entry of a key's spend. */
export function spendKey(keyId: string): Deno.KvKey {
  return ["spend", keyId];
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
