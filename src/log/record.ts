import type { GuardrailVerdict } from "../guardrails/report.ts";

/** One request's log record (DESIGN §9): a JSON line on stdout and an entry in KV. */
export interface LogRecord {
  /** ISO 8601 time the request arrived. */
  ts: string;
  request_id: string;
  method: string;
  path: string;
  status: number;
  /** Milliseconds from arrival to the last byte (or the disconnect). */
  ms: number;
  ip: string;
  key_id: string | null;
  model: string | null;
  provider: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** The error code sent to the client, or `null` on success. */
  error: string | null;
  /** What the request cost at its model's `pricing` (currency units), when priced. */
  cost?: number;
  /** Whether the response was a stream. */
  stream?: boolean;
  /** Present when `completion_tokens` was estimated from the streamed text (a stream cut short
   * before its back end reported them, or one that never did). */
  estimated?: true;
  /** `shutdown`: the process stopped before the request ended. */
  reason?: "shutdown";
  /** The verdicts of the model's guardrails (what they found by type and count, never the
   * values), when it has some. */
  guardrails?: GuardrailVerdict[];
  /** What the response cache did, for a model with one: `hit`, `miss`, or `bypass` (not used
   * for this call: the key, `Cache-Control: no-store`, an anonymous caller). */
  cache?: "hit" | "miss" | "bypass";
  /** The batch the request was a line of (see docs/batches.md). */
  batch_id?: string;
  /** Message text, only when `logs.include_content` is on. */
  content?: unknown;
}

/** The text fields of a record that carry what a caller sent or chose. */
type TextField =
  | "request_id"
  | "method"
  | "path"
  | "ip"
  | "key_id"
  | "model"
  | "provider"
  | "error";

/** Characters each text field keeps at most. Model ids are at most 128 characters, so a known
 * model is never cut; key and request ids are ours (20 and 36 characters). */
const TEXT_BOUNDS: Readonly<Record<TextField, number>> = {
  request_id: 64,
  method: 32,
  path: 256,
  ip: 64,
  key_id: 64,
  model: 128,
  provider: 128,
  error: 128,
};
const TEXT_FIELDS = Object.freeze(Object.keys(TEXT_BOUNDS) as TextField[]);

/** `text`, or when longer than `max` characters, its start and a marker with its length
 * (`\u2026[70000 chars]`, an ellipsis first), `max` (at least 20) characters in all; a
 * surrogate pair is never split. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `\u2026[${text.length} chars]`;
  let end = Math.max(0, max - marker.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + marker;
}

/** The record with every text field within its bound (`path` 256 characters, `model` 128, ...),
 * so that no request can make a log line, a KV row or a usage key unbounded; the record
 * itself when nothing needs cutting. */
export function boundRecord(record: LogRecord): LogRecord {
  let bounded: LogRecord | undefined;
  for (const field of TEXT_FIELDS) {
    const value = record[field];
    const max = TEXT_BOUNDS[field];
    if (typeof value === "string" && value.length > max) {
      bounded ??= { ...record };
      bounded[field] = truncateText(value, max);
    }
  }
  return bounded ?? record;
}
