import type { LimitsConfig, LimitScope, WindowLimit } from "../config/types.ts";
import type { KeyRecord } from "../auth/principal.ts";

/** The fixed windows: a minute, and a UTC day (the epoch has no leap seconds). */
export const WINDOWS = [
  { name: "minute", field: "per_minute", ms: 60_000 },
  { name: "day", field: "per_day", ms: 86_400_000 },
] as const;

/** One limited window as a request leaves it. */
export interface WindowState {
  name: "minute" | "day" | "month";
  limit: number;
  /** Requests left in the window after this one (0 when exhausted). */
  remaining: number;
  /** Unix ms at which the window ends and its count starts again from 0. */
  resetAt: number;
}

/** The limits of a scope for an anonymous caller (`key` = null) or a key: the key's
 * per-scope overrides win over the configured key limits (`null` = unlimited). */
export function limitsFor(
  limits: LimitsConfig,
  scope: LimitScope,
  key: KeyRecord | null,
): WindowLimit {
  if (key === null) return limits.anonymous[scope];
  const base = limits.key[scope];
  const own = key.limits[scope];
  if (own === undefined) return base;
  const merged: WindowLimit = {
    per_minute: own.per_minute !== undefined ? own.per_minute : base.per_minute,
    per_day: own.per_day !== undefined ? own.per_day : base.per_day,
  };
  for (const name of ["tokens_per_minute", "tokens_per_day"] as const) {
    const value = own[name] !== undefined ? own[name] : base[name];
    if (value !== undefined) merged[name] = value;
  }
  return merged;
}

/** The token limits in a scope's limits (`null` for a window without one). */
export function tokenLimitOf(
  limit: WindowLimit,
): { per_minute: number | null; per_day: number | null } {
  return { per_minute: limit.tokens_per_minute ?? null, per_day: limit.tokens_per_day ?? null };
}

/** Whether neither window is limited. */
export function isUnlimited(limit: WindowLimit): boolean {
  return limit.per_minute === null && limit.per_day === null;
}

/** The window whose state goes in the headers: the one closest to running out (fewest
 * remaining; on a tie the one that resets sooner). `windows` is non-empty. */
export function tightestWindow(windows: readonly WindowState[]): WindowState {
  let best = windows[0]!;
  for (const w of windows) {
    if (
      w.remaining < best.remaining || (w.remaining === best.remaining && w.resetAt < best.resetAt)
    ) {
      best = w;
    }
  }
  return best;
}

/** The exhausted window that blocks longest (the one a 429 reports and `retry-after` waits
 * for), or `null` when none is exhausted. */
export function blockingWindow(windows: readonly WindowState[]): WindowState | null {
  let best: WindowState | null = null;
  for (const w of windows) {
    if (w.remaining <= 0 && (best === null || w.resetAt > best.resetAt)) best = w;
  }
  return best;
}

/** A duration in Go's `time.Duration` style, as OpenAI's `x-ratelimit-reset-*` headers use
 * it: `250ms`, `12s`, `1.5s`, `6m0s`, `1h2m3s`. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return "0s";
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  const seconds = millis % 1000 === 0
    ? String(millis / 1000)
    : (millis / 1000).toFixed(3).replace(/0+$/, "");
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Writes the `x-ratelimit-*-requests` headers for a window as of `now`. */
export function setRateLimitHeaders(headers: Headers, window: WindowState, now: number): void {
  headers.set("x-ratelimit-limit-requests", String(window.limit));
  headers.set("x-ratelimit-remaining-requests", String(Math.max(0, window.remaining)));
  headers.set("x-ratelimit-reset-requests", formatDuration(window.resetAt - now));
}

/** Whole seconds until a window resets, at least 1: the `retry-after` value. */
export function retryAfterSeconds(window: WindowState, now: number): number {
  return Math.max(1, Math.ceil((window.resetAt - now) / 1000));
}
