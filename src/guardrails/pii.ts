/**
 * Personal data and secrets in text (the `pii` guardrail): e-mail addresses, phone numbers,
 * payment card numbers (Luhn-checked), IBANs (mod-97 checked), US social security numbers, IP
 * addresses (v4 and v6) and secrets that look like API keys (providers' key prefixes, long
 * high-entropy tokens). Pure functions. Every pattern is linear-time: no nested unbounded
 * repeats, every repeat bounded, so a crafted text costs at most a bounded amount of work per
 * character (see safe_pattern.ts for why).
 */
import type { PiiKind } from "../config/types.ts";

/** A span of text found by a detector: `[start, end)` and what it is. */
export interface Finding {
  start: number;
  end: number;
  kind: string;
}

/**
 * A detector: a pattern finding candidates, and a check of each. Patterns start with what the
 * value starts with (no leading lookbehind, which V8 tries at every position: the first form
 * of these took 460 µs on 10 KB of prose, this one ~60 µs); what may not come before a value
 * is checked on the character before the match (`notAfter`).
 */
interface Detector {
  kind: PiiKind;
  /** Finds candidates (or {@link runs} does). */
  pattern?: RegExp;
  /** The candidates' spans, for a detector that scans rather than matches. */
  runs?(text: string): Iterable<[number, number]>;
  /** Characters the one before a value may not be. */
  notAfter?: RegExp;
  /** Where the value starts, from where its pattern matched (`-1`: no value there). */
  start?(text: string, at: number): number;
  valid?(match: string): boolean;
}

/** The placeholder type of each kind (`[EMAIL_1]`). */
export const PLACEHOLDER_TYPES: Readonly<Record<PiiKind, string>> = {
  email: "EMAIL",
  phone: "PHONE",
  card: "CARD",
  iban: "IBAN",
  ssn: "SSN",
  ip: "IP",
  secret: "SECRET",
};

/** Characters that may be part of a token (a secret or an identifier). */
const TOKEN = "A-Za-z0-9_\\-+/=";
const TOKEN_CHAR = new RegExp(`[${TOKEN}]`);
/** Characters of an e-mail address's local part. */
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;

/** The detectors, most specific first: where two findings overlap the earlier one wins. */
const DETECTORS: readonly Detector[] = [
  {
    kind: "secret",
    pattern: new RegExp(
      [
        // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), and keys like Switchyard's own (sk-sy-).
        "sk-[A-Za-z0-9_-]{20,200}",
        // AWS access key ids.
        "(?:AKIA|ASIA)[0-9A-Z]{16}",
        // GitHub tokens.
        "gh[pousr]_[A-Za-z0-9]{36,251}",
        "github_pat_[A-Za-z0-9_]{22,251}",
        // Slack tokens.
        "xox[abposr]-[A-Za-z0-9-]{10,200}",
        // Google API keys.
        "AIza[0-9A-Za-z_-]{35}",
        // Stripe keys.
        "[rs]k_(?:live|test)_[A-Za-z0-9]{16,200}",
      ].map((p) => `${p}(?![${TOKEN}])`).join("|"),
      "g",
    ),
    notAfter: TOKEN_CHAR,
  },
  {
    kind: "email",
    // From the @: the local part before it is read backwards (emailStart).
    pattern: /@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
    start: emailStart,
  },
  {
    kind: "iban",
    pattern: /[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g,
    notAfter: /[A-Za-z0-9]/,
    valid: ibanValid,
  },
  {
    kind: "card",
    pattern: /\d(?:[ -]?\d){12,18}(?![\d-]|\.\d)/g,
    notAfter: /[\d.-]/,
    valid: cardValid,
  },
  {
    kind: "ssn",
    pattern: /(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/g,
    notAfter: /[\d-]/,
  },
  {
    kind: "phone",
    pattern:
      /(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w-]|\.\d)/g,
    notAfter: /[\w+.-]/,
    valid: (m) => {
      const digits = m.replace(/\D/g, "").length;
      return digits >= 8 && digits <= 15;
    },
  },
  {
    kind: "ip",
    pattern: /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\d|\.\d)/g,
    notAfter: /[\d.]/,
    valid: (m) => m.split(".").every((n) => Number(n) <= 255 && (n === "0" || n[0] !== "0")),
  },
  {
    kind: "ip",
    // From a colon: the hex digits before it are read backwards (ipv6Start).
    pattern: /:[0-9A-Fa-f:]{1,38}(?![\w:])/g,
    start: ipv6Start,
    valid: ipv6Valid,
  },
  {
    kind: "secret",
    // Scanned, not matched: a RegExp tried at every character took ~160 µs on 10 KB of prose.
    runs: (text) => tokenRuns(text, 32, 256),
    valid: highEntropy,
  },
];

/** Which ASCII characters are token characters (as {@link TOKEN}). */
const TOKEN_CODES = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=") {
  TOKEN_CODES[c.charCodeAt(0)] = 1;
}

/** The spans of `text` that are runs of token characters of `min` to `max` characters. */
function tokenRuns(text: string, min: number, max: number): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 && TOKEN_CODES[c] === 1) continue;
    if (i - start >= min && i - start <= max) out.push([start, i]);
    start = i + 1;
  }
  if (n - start >= min && n - start <= max) out.push([start, n]);
  return out;
}

/** Where the e-mail address whose @ is at `at` starts: its local part, read backwards (1 to 64
 * characters, not preceded by another local-part character), or -1. */
function emailStart(text: string, at: number): number {
  let start = at;
  while (start > 0 && at - start < 64 && LOCAL_CHAR.test(text[start - 1]!)) start--;
  if (start === at || (start > 0 && LOCAL_CHAR.test(text[start - 1]!))) return -1;
  return start;
}

/** Where the IPv6 address whose first colon is at `at` starts: up to 4 hex digits before it,
 * not preceded by a word character, a colon or a dot; or -1. */
function ipv6Start(text: string, at: number): number {
  let start = at;
  while (start > 0 && at - start < 4 && /[0-9A-Fa-f]/.test(text[start - 1]!)) start--;
  if (start > 0 && /[\w:.]/.test(text[start - 1]!)) return -1;
  return start;
}

/** Every kind, for a guardrail that names none. */
const ALL = new Set<PiiKind>(Object.keys(PLACEHOLDER_TYPES) as PiiKind[]);

/** The findings of `kinds` in `text`, in order, none overlapping. */
export function findPii(text: string, kinds: ReadonlySet<PiiKind> = ALL): Finding[] {
  const found: Finding[] = [];
  for (const detector of DETECTORS) {
    if (!kinds.has(detector.kind)) continue;
    // matchAll runs a copy of the pattern: the shared RegExp's lastIndex is never moved.
    const spans = detector.runs ? detector.runs(text) : Array.from(
      text.matchAll(detector.pattern!),
      (m): [number, number] => [m.index, m.index + m[0].length],
    );
    for (const [at, end] of spans) {
      const start = detector.start ? detector.start(text, at) : at;
      if (start < 0) continue;
      if (detector.notAfter && start > 0 && detector.notAfter.test(text[start - 1]!)) continue;
      if (detector.valid && !detector.valid(text.slice(start, end))) continue;
      found.push({ start, end, kind: detector.kind });
    }
  }
  return withoutOverlaps(found);
}

/** `found` in order of start, each finding that overlaps one kept before it left out (the
 * detectors' order decides between findings that start together: the first listed). */
export function withoutOverlaps<T extends Finding>(found: T[]): T[] {
  if (found.length < 2) return found;
  const sorted = found.map((f, i) => ({ f, i })).sort((a, b) => a.f.start - b.f.start || a.i - b.i);
  const out: T[] = [];
  let end = -1;
  for (const { f } of sorted) {
    if (f.start < end) continue;
    out.push(f);
    end = f.end;
  }
  return out;
}

/** Whether a card number as written is one: digits alone, or in groups as cards print them
 * (the first of 4, the others of 3 to 6, one kind of separator), that pass the Luhn check. */
function cardValid(text: string): boolean {
  const groups = text.split(/[ -]/);
  if (groups.length > 1) {
    if (text.includes(" ") && text.includes("-")) return false;
    if (groups[0]!.length !== 4 || groups.some((g) => g.length < 3 || g.length > 6)) return false;
  }
  return luhnValid(groups.join(""));
}

/** Whether a string of digits passes the Luhn check (payment card numbers). */
export function luhnValid(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** IBAN lengths by country (ISO 13616 registry), for the countries that use IBANs. */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
}; // deno-fmt-ignore

/** Whether `text` (spaces allowed) is an IBAN: a known country's length and mod-97 = 1. */
export function ibanValid(text: string): boolean {
  const iban = text.replaceAll(" ", "");
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const c of moved) {
    const code = c.charCodeAt(0);
    const value = code <= 57 ? code - 48 : code - 55; // A = 10 ... Z = 35
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return rest === 1;
}

/** Whether `text` is an IPv6 address (as the URL parser reads one). */
export function ipv6Valid(text: string): boolean {
  if (!/[0-9A-Fa-f]/.test(text) || !URL.canParse(`http://[${text}]/`)) return false;
  // Eight groups, or fewer with one `::`.
  return text.includes("::") || text.split(":").length === 8;
}

/**
 * Whether a token looks like a random secret rather than a word or an identifier: upper and
 * lower case letters and digits mixed, and at least 4 bits of entropy per character (hex
 * digests, UUIDs and paths fall below).
 */
export function highEntropy(token: string): boolean {
  if (!/[a-z]/.test(token) || !/[A-Z]/.test(token) || !/\d/.test(token)) return false;
  const counts = new Map<string, number>();
  for (const c of token) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / token.length;
    bits -= p * Math.log2(p);
  }
  return bits >= 4;
}
