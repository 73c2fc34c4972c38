/**
 * The batch priority (docs/batches.md): a key's batch lines may use only a share of its request
 * and token limits (`batches.limit_share`), so that its live traffic always has the rest. Batch
 * lines count in a counter of their own, taken like the limiter's (an optimistic KV
 * transaction, exact across instances); the key's token use is read from the token ledger.
 */
import type { KeyRecord } from "../auth/principal.ts";
import type { LimitsConfig, LimitScope } from "../config/types.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import { tokenKey } from "../limits/tokens.ts";
import { limitsFor, tokenLimitOf, WINDOWS } from "../limits/windows.ts";

/** `[start1, count1, start2, count2]`: the minute and day windows, as the ledgers store them. */
type Counts = [number, number, number, number];

const DAY_MS = WINDOWS[1].ms;

/**
 * Takes a place for one line of `key` in `scope`: 0 when its batch lines are under `share` of
 * each request limit (the line is counted) and the key's tokens under `share` of each token
 * limit; else the milliseconds until the fullest window passes (nothing is counted).
 */
export async function takeShare(
  kv: Deno.Kv,
  limits: LimitsConfig,
  key: KeyRecord,
  scope: LimitScope,
  share: number,
  now: number,
): Promise<number> {
  const tokens = tokenLimitOf(limitsFor(limits, "chat", key));
  const used = await kv.get<Counts>(tokenKey("chat", { kind: "key", id: key.id }));
  const tokenWait = Math.max(
    ...WINDOWS.map((w, i) => overShare(used.value, i, tokens[w.field], w.ms, share, now)),
  );
  if (tokenWait > 0) return tokenWait;
  const requests = limitsFor(limits, scope, key);
  const counterKey = ["batch_share", scope, key.id];
  for (;;) {
    const entry = await kv.get<Counts>(counterKey);
    const wait = Math.max(
      ...WINDOWS.map((w, i) => overShare(entry.value, i, requests[w.field], w.ms, share, now)),
    );
    if (wait > 0) return wait;
    const counts = counted(entry.value, now);
    const result = await retryWhileBusy(() =>
      kv.atomic().check(entry).set(counterKey, counts, {
        expireIn: counts[2] + DAY_MS - now + 60_000,
      }).commit()
    );
    if (result.ok) return 0;
  }
}

/** `counts` with one more request in each window holding `now`. */
function counted(counts: Counts | null, now: number): Counts {
  const next: Counts = [0, 0, 0, 0];
  WINDOWS.forEach((w, i) => {
    const start = now - (now % w.ms);
    next[2 * i] = start;
    next[2 * i + 1] = (counts !== null && counts[2 * i] === start ? counts[2 * i + 1]! : 0) + 1;
  });
  return next;
}

/** Until when window `i` of `counts` (`ms` long) is at `share` of `limit` or past it, or 0. */
function overShare(
  counts: Counts | null,
  i: number,
  limit: number | null,
  ms: number,
  share: number,
  now: number,
): number {
  if (counts === null || limit === null) return 0;
  const start = now - (now % ms);
  if (counts[2 * i] !== start) return 0;
  const allowed = Math.max(1, Math.floor(limit * share));
  return counts[2 * i + 1]! >= allowed ? start + ms - now : 0;
}
