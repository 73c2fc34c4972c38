/**
 * The per-day counters (usage in `usage.ts`, cache and guardrail counts in `checks.ts`) are
 * KV sums, which cannot expire on their own: the days older than `logs.usage_retention_days`
 * are deleted by the log sink once a day (any instance; deleting twice is harmless).
 */
import { CHECKS_PREFIX } from "./checks.ts";
import { USAGE_PREFIX } from "./usage.ts";

/** Keys deleted per commit, within KV's 1,000 mutations. */
const DELETES_PER_COMMIT = 500;

/** Deletes the counters of the days before `firstKept` (`YYYY-MM-DD`); how many it deleted. */
export async function sweepCounters(kv: Deno.Kv, firstKept: string): Promise<number> {
  let deleted = 0;
  for (const prefix of [USAGE_PREFIX, CHECKS_PREFIX]) {
    const old = kv.list({ prefix: [...prefix], end: [...prefix, firstKept] });
    let keys: Deno.KvKey[] = [];
    for await (const entry of old) {
      keys.push(entry.key);
      if (keys.length === DELETES_PER_COMMIT) {
        deleted += await deleteAll(kv, keys);
        keys = [];
      }
    }
    if (keys.length > 0) deleted += await deleteAll(kv, keys);
  }
  return deleted;
}

async function deleteAll(kv: Deno.Kv, keys: readonly Deno.KvKey[]): Promise<number> {
  const op = kv.atomic();
  for (const key of keys) op.delete(key);
  await op.commit();
  return keys.length;
}
