/**
 * A `deny` guardrail's list as one finder: its words and phrases matched whole (not inside a
 * longer word) ignoring case, and its regular expressions (checked safe at config load:
 * safe_pattern.ts).
 */
import { type Finding, withoutOverlaps } from "./pii.ts";
import { maxMatchChars, PATTERN_FLAGS } from "./safe_pattern.ts";

/** The kind of what a deny list finds (`[DENIED_1]`). */
export const DENIED = "denied";

/** Finds a deny list's words and patterns in a text. */
export type DenyFinder = (text: string) => Finding[];

/** The finder of `words` and `patterns`. */
export function denyFinder(words: readonly string[], patterns: readonly string[]): DenyFinder {
  const regexes = patterns.map((p) => new RegExp(p, PATTERN_FLAGS));
  if (words.length > 0) {
    // Longest first, so that a phrase wins over a word it starts with.
    const alternatives = [...words].sort((a, b) => b.length - a.length)
      .map((w) => escapeRegExp(w.trim()).replace(/\s+/g, "\\s{1,8}"));
    regexes.unshift(
      new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives.join("|")})(?![\\p{L}\\p{N}_])`, "giu"),
    );
  }
  return (text) => {
    const found: Finding[] = [];
    for (const regex of regexes) {
      for (const m of text.matchAll(regex)) {
        // An empty match finds nothing (a pattern such as `x{0,3}`).
        if (m[0].length > 0) {
          found.push({ start: m.index, end: m.index + m[0].length, kind: DENIED });
        }
      }
    }
    return withoutOverlaps(found);
  };
}

/** The most characters one finding of `words` and `patterns` can span (a phrase's space
 * matches up to 8 spaces or line breaks). */
export function longestFinding(words: readonly string[], patterns: readonly string[]): number {
  let longest = 0;
  for (const w of words) longest = Math.max(longest, w.trim().replace(/\s+/g, "12345678").length);
  for (const p of patterns) longest = Math.max(longest, maxMatchChars(p));
  return longest;
}

/** `text` as a RegExp that matches it literally. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&");
}
