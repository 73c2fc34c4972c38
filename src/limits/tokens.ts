/**
 * Token limits (DESIGN §8): tokens (input + output) per minute and per day, per client IP or
 * key, on the ledger (ledger.ts): `["tokens", scope, "ip" | "key", subject]`.
 */
import type { Clock } from "../clock.ts";
import type { LimitScope } from "../config/types.ts";
import { type ApiError, rateLimited } from "../errors.ts";
import type { GroupCommit } from "./group_commit.ts";
import { DAY, Ledger, MINUTE } from "./ledger.ts";
import { formatDuration, retryAfterSeconds, type WindowState } from "./windows.ts";

/** Whose tokens are counted: an anonymous client's address (see subject.ts) or a key's id. */
export interface TokenSubject {
  kind: "ip" | "key";
  id: string;
}

/** The token ledger: minute and day windows. */
export function tokenLedger(deps: { kv: Deno.Kv; clock: Clock; commits: GroupCommit }): Ledger {
  return new Ledger({ ...deps, windows: [MINUTE, DAY], refusal });
}

/** The ledger entry of a subject's tokens in `scope`. */
export function tokenKey(scope: LimitScope, subject: TokenSubject): Deno.KvKey {
  return ["tokens", scope, subject.kind, subject.id];
}

/** How a subject is named in a refusal. */
export function tokenSubjectName(subject: TokenSubject): string {
  return subject.kind === "key" ? "for this API key" : "per IP address for anonymous callers";
}

/** Writes the `x-ratelimit-*-tokens` headers for a window as of `now`. */
export function setTokenHeaders(headers: Headers, window: WindowState, now: number): void {
  headers.set("x-ratelimit-limit-tokens", String(window.limit));
  headers.set("x-ratelimit-remaining-tokens", String(Math.max(0, window.remaining)));
  headers.set("x-ratelimit-reset-tokens", formatDuration(window.resetAt - now));
}

function refusal(window: WindowState, tokens: number, subject: string, now: number): ApiError {
  const headers = new Headers();
  setTokenHeaders(headers, window, now);
  if (tokens > window.limit) {
    return rateLimited(
      `Request too large: it may use up to ${tokens} tokens (its prompt plus its maximum output), more than the limit of ${window.limit} tokens per ${window.name} ${subject}. Lower the maximum output tokens or shorten the prompt.`,
      headers,
    );
  }
  const left = Math.max(0, window.remaining + tokens);
  const retryAfter = retryAfterSeconds(window, now);
  headers.set("retry-after", String(retryAfter));
  return rateLimited(
    `Rate limit reached for tokens: ${window.limit} per ${window.name} ${subject}, ${left} left; this request may use up to ${tokens} (its prompt plus its maximum output). Try again in ${retryAfter} s, or lower the maximum output tokens.`,
    headers,
  );
}
