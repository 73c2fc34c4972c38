/**
 * Retries before the first byte (DESIGN §6): which failed answers may be retried, and how long
 * to wait before the next attempt.
 */
import { retryAfterMs } from "./retry_after.ts";

/** Retry timing; the defaults suit production, tests shorten them. */
export interface RetryTiming {
  /** Wait before the first retry when the upstream gave no `retry-after`; doubled per retry. */
  initialBackoffMs?: number;
  /** Upper bound of the exponential backoff. */
  maxBackoffMs?: number;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

/** Whether an upstream status may be retried before the first byte (DESIGN §6): what the
 * official OpenAI and Anthropic SDKs retry, a request timeout (408), a lock timeout (409), a
 * rate limit (429) and every 5xx (Anthropic's 529 included). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Whether an upstream's error answer may be retried, as the official SDKs decide: as its
 * `x-should-retry` says (`true` or `false`), else by {@link isRetryableStatus}. */
export function shouldRetry(status: number, headers: Headers): boolean {
  const asked = headers.get("x-should-retry");
  if (asked === "true") return true;
  if (asked === "false") return false;
  return isRetryableStatus(status);
}

/** How many retries a provider's call gets and how long each waits. */
export class RetryPolicy {
  readonly #maxRetries: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #random: () => number;

  constructor(maxRetries: number, timing: RetryTiming = {}) {
    this.#maxRetries = maxRetries;
    this.#initialBackoffMs = timing.initialBackoffMs ?? 500;
    this.#maxBackoffMs = timing.maxBackoffMs ?? 8000;
    this.#random = timing.random ?? Math.random;
  }

  /**
   * Milliseconds to wait before the retry after attempt `attempt` (0 for the first): what the
   * failed answer's `headers` ask for (`retry-after-ms`, `retry-after`), else an exponential
   * backoff with up to 25% jitter; `null` when no retry is left or the wait would not end
   * within `remainingMs` (the call's deadline).
   */
  wait(attempt: number, headers: Headers | null, now: number, remainingMs: number): number | null {
    if (attempt >= this.#maxRetries) return null;
    const asked = headers === null ? null : retryAfterMs(headers, now);
    const backoff = Math.min(this.#initialBackoffMs * 2 ** attempt, this.#maxBackoffMs) *
      (1 - 0.25 * this.#random());
    const wait = asked ?? backoff;
    return wait >= remainingMs ? null : wait;
  }
}
