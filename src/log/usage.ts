import { type LogRecord, truncateText } from "./record.ts";

/** Key prefix of the usage counters:
 * `["usage", "YYYY-MM-DD", key id or "", model or "", field] -> Deno.KvU64`. */
export const USAGE_PREFIX = ["usage"] as const;

/** The counted fields. */
export const USAGE_FIELDS = [
  "requests",
  "errors",
  "prompt_tokens",
  "completion_tokens",
  "cost_micros",
] as const;
export type UsageField = typeof USAGE_FIELDS[number];

/** Requests and tokens of one key (or anonymous callers) on one model on one day. */
export interface UsageRow {
  key_id: string | null;
  model: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Cost in millionths of a currency unit (priced models only). */
  cost_micros: number;
}

/** Whether a request counts as usage: every request to the public API (`/v1/...`, and the
 * Gemini door's `/v1beta/...`). */
function counts(record: LogRecord): boolean {
  return record.path.startsWith("/v1/") || record.path.startsWith("/v1beta/");
}

/** Characters of a key id or model kept in a usage key. Two such parts (at most 3 UTF-8 bytes a
 * character) and the rest of the key stay far inside KV's 2,048-byte key limit. */
const KEY_PART_CHARS = 128;

/** A key id or model as a usage key part: the value itself, or when longer than
 * {@link KEY_PART_CHARS} (never in a bounded record), its start and a hash of the whole, so that
 * distinct long values keep distinct counters. */
export function keyPart(value: string | null): string {
  const text = value ?? "";
  if (text.length <= KEY_PART_CHARS) return text;
  return `${truncateText(text, KEY_PART_CHARS - 9)}#${fnv1a(text)}`;
}

/** The 32-bit FNV-1a hash of a text's UTF-16 code units, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** The UTC day (`YYYY-MM-DD`) of `ms`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Sum mutations by key (the key as JSON): counters committed with the log rows. */
export type CounterSums = Map<string, { key: Deno.KvKey; n: bigint }>;

/** Adds `n` to the counter at `key` in `sums`. */
export function addSum(sums: CounterSums, key: Deno.KvKey, n: number): void {
  const id = JSON.stringify(key);
  const sum = sums.get(id);
  if (sum) sum.n += BigInt(n);
  else sums.set(id, { key, n: BigInt(n) });
}

/**
 * Adds the usage counters of log records to `sums`, per (day, key, model), so that usage is
 * committed in the same transaction as the records themselves: exactly once each. At most 5
 * counters per record, each key within KV's limit whatever the record holds.
 */
export function usageSums(sums: CounterSums, records: readonly LogRecord[]): void {
  // Totalled per (day, key, model) first: one counter key made per total, not per record.
  const totals = new Map<string, { key: string[]; values: Record<UsageField, number> }>();
  for (const record of records) {
    if (!counts(record)) continue;
    const day = record.ts.slice(0, 10);
    const keyId = keyPart(record.key_id);
    const model = keyPart(record.model);
    const id = `${day}\u0000${keyId}\u0000${model}`;
    let total = totals.get(id);
    if (!total) {
      total = {
        key: [...USAGE_PREFIX, day, keyId, model],
        values: { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0 },
      };
      totals.set(id, total);
    }
    total.values.requests += 1;
    if (record.status >= 400) total.values.errors += 1;
    total.values.prompt_tokens += record.prompt_tokens ?? 0;
    total.values.completion_tokens += record.completion_tokens ?? 0;
    total.values.cost_micros += Math.round((record.cost ?? 0) * 1_000_000);
  }
  for (const { key, values } of totals.values()) {
    for (const field of USAGE_FIELDS) {
      if (values[field] !== 0) addSum(sums, [...key, field], values[field]);
    }
  }
}

/** Adds every counter of `from` to `into`. */
export function mergeSums(into: CounterSums, from: CounterSums): void {
  for (const [id, { key, n }] of from) {
    const sum = into.get(id);
    if (sum) sum.n += n;
    else into.set(id, { key, n });
  }
}

/** The usage rows of one UTC day (`YYYY-MM-DD`), ordered by key id then model. */
export async function readUsage(kv: Deno.Kv, day: string): Promise<UsageRow[]> {
  const rows = new Map<string, UsageRow>();
  for await (const entry of kv.list<Deno.KvU64>({ prefix: [...USAGE_PREFIX, day] })) {
    const [, , keyId, model, field] = entry.key as [string, string, string, string, UsageField];
    const id = `${keyId}\u0000${model}`;
    let row = rows.get(id);
    if (!row) {
      row = {
        key_id: keyId === "" ? null : keyId,
        model: model === "" ? null : model,
        requests: 0,
        errors: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_micros: 0,
      };
      rows.set(id, row);
    }
    row[field] = Number(entry.value.value);
  }
  return [...rows.values()];
}
