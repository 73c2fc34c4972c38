import type { LogRecord } from "../../src/log/record.ts";

/** A request log record for tests: a successful chat at `ms` (default 2026-01-15T12:00Z). */
export function makeLogRecord(fields: Partial<LogRecord> = {}, ms = Date.UTC(2026, 0, 15, 12)) {
  const record: LogRecord = {
    ts: new Date(ms).toISOString(),
    request_id: "req_" + crypto.randomUUID().replaceAll("-", ""),
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    ms: 1,
    ip: "127.0.0.1",
    key_id: null,
    model: "sim-chat",
    provider: "sim",
    prompt_tokens: null,
    completion_tokens: null,
    error: null,
    ...fields,
  };
  return record;
}
