import type { LogRecord } from "./record.ts";

/** Key prefix of the usage counters:
 * `["usage", "YYYY-MM-DD", key id or "", model or "", field] → Deno.KvU64`. */
export const USAGE_PREFIX = ["usage"] as const;

/** The counted fields. */
export const USAGE_FIELDS = ["requests", "errors", "prompt_tokens", "completion_tokens"] as const;
export type UsageField = typeof USAGE_FIELDS[number];

/** Requests and tokens of one key (or anonymous callers) on one model on one day. */
export interface UsageRow {
  key_id: string | null;
  model: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Whether a request counts as usage: every request to the public API (`/v1/…`). */
function counts(record: LogRecord): boolean {
  return record.path.startsWith("/v1/");
}

/**
 * Adds `sum` mutations for a batch of log records to `op`, aggregated per (day, key, model),
 * so that usage is committed in the same transaction as the records themselves: exactly once
 * each. It adds at most 4 mutations per record.
 */
export function addUsage(op: Deno.AtomicOperation, records: readonly LogRecord[]): void {
  const totals = new Map<string, { record: LogRecord; values: Record<UsageField, number> }>();
  for (const record of records) {
    if (!counts(record)) continue;
    const id = `${record.ts.slice(0, 10)}\u0000${record.key_id ?? ""}\u0000${record.model ?? ""}`;
    let total = totals.get(id);
    if (!total) {
      total = {
        record,
        values: { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0 },
      };
      totals.set(id, total);
    }
    total.values.requests += 1;
    if (record.status >= 400) total.values.errors += 1;
    total.values.prompt_tokens += record.prompt_tokens ?? 0;
    total.values.completion_tokens += record.completion_tokens ?? 0;
  }
  for (const { record, values } of totals.values()) {
    const key = [...USAGE_PREFIX, record.ts.slice(0, 10), record.key_id ?? "", record.model ?? ""];
    for (const field of USAGE_FIELDS) {
      if (values[field] !== 0) op.sum([...key, field], BigInt(values[field]));
    }
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
      };
      rows.set(id, row);
    }
    row[field] = Number(entry.value.value);
  }
  return [...rows.values()];
}
