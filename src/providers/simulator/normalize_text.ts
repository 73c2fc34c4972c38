/**
 * Text normalisation for the simulator's classifier: undoes the common ways of dodging a word
 * list (case, accents, look-alike letters, l33t, punctuation or spaces inside a word).
 */

/** Letters from other scripts that look like Latin ones. */
const LOOKALIKES: Record<string, string> = {
  "а": "a",
  "в": "b",
  "е": "e",
  "ё": "e",
  "к": "k",
  "м": "m",
  "н": "h",
  "о": "o",
  "р": "p",
  "с": "c",
  "т": "t",
  "у": "y",
  "х": "x",
  "і": "i",
  "ј": "j",
  "ѕ": "s",
  "α": "a",
  "β": "b",
  "ε": "e",
  "ι": "i",
  "κ": "k",
  "ν": "v",
  "ο": "o",
  "ρ": "p",
  "τ": "t",
  "υ": "u",
  "χ": "x",
};

/** Digits and symbols used as letters inside words. */
const LEET: Record<string, string> = {
  "0": "o",
  "1": "i",
  "3": "e",
  "4": "a",
  "5": "s",
  "7": "t",
  "8": "b",
  "9": "g",
  "@": "a",
  "$": "s",
  "!": "i",
  "|": "i",
  "+": "t",
  "€": "e",
};

const LOOKALIKE_RE = new RegExp(`[${Object.keys(LOOKALIKES).join("")}]`, "g");
const LEET_RE = /[0134578@$!|+€9]/g;

/** Sentence punctuation that may open or close a word without being part of it. */
const OPENERS: ReadonlySet<string> = new Set(`("'“‘`);
const CLOSERS: ReadonlySet<string> = new Set(`!?.,;:)"'”’`);

/** Maps l33t characters in one whitespace-separated chunk that has letters in it. */
function unleet(chunk: string): string {
  if (!/\p{L}/u.test(chunk)) return chunk; // "5", "24/7": numbers stay numbers
  // Sentence punctuation around the word is not part of it ("kill!" is not "killi"). Scanned
  // with loops: the regex /^(…*)(.*?)(…*)$/ took 10 s on "a" + "!" × 100 000 + "x".
  let start = 0;
  while (OPENERS.has(chunk.charAt(start))) start++; // stops at the letter at the latest
  let end = chunk.length;
  while (end > start && CLOSERS.has(chunk.charAt(end - 1))) end--;
  const word = chunk.slice(start, end).replace(LEET_RE, (c) => LEET[c]!);
  return chunk.slice(0, start) + word + chunk.slice(end);
}

/**
 * The canonical form of a text: lower-case ASCII words separated by single spaces. Accents and
 * look-alike letters are folded, l33t is read ("k1ll" → "kill"), punctuation inside a word is
 * dropped ("k.i.l.l", "self-harm" → "selfharm", "don't" → "dont") and runs of three or more
 * single letters are joined ("k i l l" → "kill").
 */
export function canonicalText(text: string): string {
  let s = text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
  s = s.replace(/[\u00ad\u200b-\u200d\u2060\ufeff]/g, "");
  s = s.replace(LOOKALIKE_RE, (c) => LOOKALIKES[c]!);
  s = s.replace(/\S+/g, unleet);
  s = s.replace(/(?<=\p{L})[.\-_*'’`~^]+(?=\p{L})/gu, "");
  const tokens = s.split(/[^\p{L}\p{N}]+/u).filter((t) => t !== "");
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length >= 3) out.push(run.join(""));
    else out.push(...run);
    run = [];
  };
  for (const token of tokens) {
    if (token.length === 1 && /\p{L}/u.test(token)) run.push(token);
    else {
      flush();
      out.push(token);
    }
  }
  flush();
  return out.join(" ");
}
