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

/** A detector: a pattern finding candidates, and a check of each candidate. */
interface Detector {
  kind: PiiKind;
  pattern: RegExp;
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
      ].map((p) => `(?<![${TOKEN}])${p}(?![${TOKEN}])`).join("|"),
      "g",
    ),
  },
  {
    kind: "email",
    pattern:
      /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
  },
  {
    kind: "iban",
    pattern:
      /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g,
    valid: ibanValid,
  },
  {
    kind: "card",
    pattern: /(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d-]|\.\d)/g,
    valid: cardValid,
  },
  {
    kind: "ssn",
    pattern: /(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/g,
  },
  {
    kind: "phone",
    pattern:
      /(?<![\w+.-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w-]|\.\d)/g,
    valid: (m) => {
      const digits = m.replace(/\D/g, "").length;
      return digits >= 8 && digits <= 15;
    },
  },
  {
    kind: "ip",
    pattern:
      /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\d|\.\d)/g,
  },
  {
    kind: "ip",
    pattern: /(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])/g,
    valid: ipv6Valid,
  },
  {
    kind: "secret",
    pattern: new RegExp(`(?<![${TOKEN}])[${TOKEN}]{32,256}(?![${TOKEN}])`, "g"),
    valid: highEntropy,
  },
];

/** Every kind, for a guardrail that names none. */
const ALL = new Set<PiiKind>(Object.keys(PLACEHOLDER_TYPES) as PiiKind[]);

/** The findings of `kinds` in `text`, in order, none overlapping. */
export function findPii(text: string, kinds: ReadonlySet<PiiKind> = ALL): Finding[] {
  const found: Finding[] = [];
  for (const detector of DETECTORS) {
    if (!kinds.has(detector.kind)) continue;
    // matchAll runs a copy of the pattern: the shared RegExp's lastIndex is never moved.
    for (const m of text.matchAll(detector.pattern)) {
      if (detector.valid && !detector.valid(m[0])) continue;
      found.push({ start: m.index, end: m.index + m[0].length, kind: detector.kind });
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
