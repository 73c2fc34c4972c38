/**
 * How long an upstream asks to be left alone: `retry-after-ms` / `retry-after` (what the
 * official SDKs wait for before a retry), and, for a rate limit, the reset headers of OpenAI
 * (`x-ratelimit-reset-requests`, `-tokens`: durations such as `6m0s`) and Anthropic
 * (`anthropic-ratelimit-*-reset`: RFC 3339 times).
 */

/** Milliseconds to wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date), if given. */
export function retryAfterMs(headers: Headers, now: number): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) {
    return Number(ms);
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The rate-limit windows an upstream may report: the header of what is left, of its reset. */
const WINDOWS: readonly (readonly [remaining: string, reset: string])[] = [
  ["x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"],
  ["x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"],
  ["anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"],
  ["anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"],
  ["anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"],
  ["anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"],
];

/**
 * Milliseconds until the rate limit that refused a request resets, from the upstream's
 * rate-limit headers: the latest reset of the windows with nothing left, or of all windows when
 * none says so (a request larger than what is left is refused with some left); `null` when the
 * upstream sent none.
 */
export function rateLimitResetMs(headers: Headers, now: number): number | null {
  let exhausted: number | null = null;
  let any: number | null = null;
  for (const [remaining, reset] of WINDOWS) {
    const value = headers.get(reset);
    const ms = value === null ? null : resetMs(value, now);
    if (ms === null) continue;
    any = Math.max(any ?? 0, ms);
    if (headers.get(remaining)?.trim() === "0") exhausted = Math.max(exhausted ?? 0, ms);
  }
  return exhausted ?? any;
}

/** The `retry-after` of an upstream's 429 when it gave no wait of any kind. */
const DEFAULT_RETRY_AFTER_MS = 1000;

/**
 * The `retry-after` (whole seconds, at least 1) a client gets with an upstream's 429: the
 * upstream's `retry-after-ms` / `retry-after`, else its rate-limit resets, else 1.
 */
export function rateLimitRetryAfter(headers: Headers, now: number): string {
  return wholeSeconds(
    retryAfterMs(headers, now) ?? rateLimitResetMs(headers, now) ?? DEFAULT_RETRY_AFTER_MS,
  );
}

/** A wait as a `retry-after` value: whole seconds, rounded up, at least 1. */
export function wholeSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** A duration as OpenAI writes a reset (`1s`, `6m0s`, `20ms`, `1h2m3.5s`). */
const DURATION =
  /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;
const UNIT_MS = [3_600_000, 60_000, 1000, 1];

/** A reset header's milliseconds from `now`: a duration, a number (seconds, or a Unix time in
 * seconds or milliseconds when that large), or a date (RFC 3339); `null` for anything else. */
function resetMs(value: string, now: number): number | null {
  const text = value.trim();
  if (text === "") return null;
  if (/^\d+(?:\.\d+)?$/.test(text)) {
    const n = Number(text);
    if (n >= 1e12) return Math.max(0, n - now);
    if (n >= 1e9) return Math.max(0, n * 1000 - now);
    return n * 1000;
  }
  const duration = DURATION.exec(text);
  if (duration !== null) {
    return UNIT_MS.reduce((sum, unit, i) => sum + Number(duration[i + 1] ?? 0) * unit, 0);
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
