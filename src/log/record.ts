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
  /** Whether the response was a stream. */
  stream?: boolean;
  /** Message text, only when `logs.include_content` is on. */
  content?: unknown;
}
