/**
 * Per-day counters of what the response cache and the guardrails did, per model, counted from
 * the request log in the same commits as its records (as `usage.ts` counts usage), for the admin
 * usage page: cache hits, misses and bypasses, and each guardrail's verdicts and what it found
 * by type.
 */
import type { GuardrailStage } from "../config/types.ts";
import type { Verdict } from "../guardrails/report.ts";
import type { LogRecord } from "./record.ts";
import { truncateText } from "./record.ts";
import { addSum, type CounterSums, keyPart } from "./usage.ts";

/** Key prefix of the counters:
 * `["usage_checks", day, model, "cache", "hit" | "miss" | "bypass"]`,
 * `["usage_checks", day, model, "guardrail", name, stage, "verdict", verdict]` and
 * `["usage_checks", day, model, "guardrail", name, stage, "found", type]` -> `Deno.KvU64`. */
export const CHECKS_PREFIX = ["usage_checks"] as const;

/** What the response cache did with a call. */
export const CACHE_RESULTS = ["hit", "miss", "bypass"] as const;
export type CacheResult = typeof CACHE_RESULTS[number];

/** The verdicts a guardrail's counters keep, in the order the admin API shows them. */
export const VERDICTS: readonly Verdict[] = [
  "passed",
  "logged",
  "redacted",
  "blocked",
  "failed_open",
  "failed_closed",
];

/** Characters of a found type kept in a key (a webhook's reason is the operator's text). */
const TYPE_CHARS = 64;

/** One guardrail's counts on one model on one day. */
export interface GuardrailCounts {
  name: string;
  stage: GuardrailStage;
  /** Requests by the guardrail's verdict. */
  verdicts: Record<Verdict, number>;
  /** What it found (redacted, blocked or logged) by type, summed over requests. */
  found: Record<string, number>;
}

/** What the cache and the guardrails did on one model on one day. */
export interface ModelChecks {
  model: string | null;
  /** Calls by cache result; `null` when none of the day's calls went through a cache. */
  cache: Record<CacheResult, number> | null;
  /** Its guardrails, by name then stage. */
  guardrails: GuardrailCounts[];
}

/** Adds the cache and guardrail counters of log records to `sums`, per day and model. */
export function checkSums(sums: CounterSums, records: readonly LogRecord[]): void {
  for (const record of records) {
    if (record.cache === undefined && !record.guardrails?.length) continue;
    const base = [...CHECKS_PREFIX, record.ts.slice(0, 10), keyPart(record.model)];
    if (record.cache !== undefined) addSum(sums, [...base, "cache", record.cache], 1);
    for (const g of record.guardrails ?? []) {
      const at = [...base, "guardrail", g.name, g.stage];
      addSum(sums, [...at, "verdict", g.verdict], 1);
      for (const [type, count] of Object.entries(g.found ?? {})) {
        if (count > 0) addSum(sums, [...at, "found", truncateText(type, TYPE_CHARS)], count);
      }
    }
  }
}

/** The counters of one UTC day (`YYYY-MM-DD`), per model (ordered by model id), each model's
 * guardrails by name then stage. */
export async function readChecks(kv: Deno.Kv, day: string): Promise<ModelChecks[]> {
  const models = new Map<string, ModelChecks>();
  for await (const entry of kv.list<Deno.KvU64>({ prefix: [...CHECKS_PREFIX, day] })) {
    const [, , model, what, ...rest] = entry.key as string[];
    const n = Number(entry.value.value);
    let row = models.get(model!);
    if (!row) {
      row = { model: model === "" ? null : model!, cache: null, guardrails: [] };
      models.set(model!, row);
    }
    if (what === "cache") {
      row.cache ??= { hit: 0, miss: 0, bypass: 0 };
      const result = rest[0] as CacheResult;
      if (result in row.cache) row.cache[result] = n;
    } else if (what === "guardrail") {
      const [name, stage, kind, value] = rest as [string, GuardrailStage, string, string];
      let g = row.guardrails.find((x) => x.name === name && x.stage === stage);
      if (!g) {
        g = { name, stage, verdicts: emptyVerdicts(), found: {} };
        row.guardrails.push(g);
      }
      if (kind === "verdict" && value in g.verdicts) g.verdicts[value as Verdict] = n;
      else if (kind === "found") g.found[value] = n;
    }
  }
  return [...models.values()];
}

/** Every verdict at zero. */
function emptyVerdicts(): Record<Verdict, number> {
  return Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
}
