/**
 * Text normalisation for the simulator's classifier: undoes the common ways of dodging a word
 * list (case, accents, look-alike letters, l33t, punctuation or spaces inside a word).
 */

/** Letters from other scripts that look like Latin ones: Cyrillic, then Greek. (As escapes: a
 * character outside Latin-1 doubles what the module's source costs; see
 * `tests/source_charset_test.ts`.) */
const LOOKALIKES: Record<string, string> = {
  "\u0430": "a",
  "\u0432": "b",
  "\u0435": "e",
  "\u0451": "e",
  "\u043a": "k",
  "\u043c": "m",
  "\u043d": "h",
  "\u043e": "o",
  "\u0440": "p",
  "\u0441": "c",
  "\u0442": "t",
  "\u0443": "y",
  "\u0445": "x",
  "\u0456": "i",
  "\u0458": "j",
  "\u0455": "s",
  "\u03b1": "a",
  "\u03b2": "b",
  "\u03b5": "e",
  "\u03b9": "i",
  "\u03ba": "k",
  "\u03bd": "v",
  "\u03bf": "o",
  "\u03c1": "p",
  "\u03c4": "t",
  "\u03c5": "u",
  "\u03c7": "x",
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
  "\u20ac": "e",
};

const LOOKALIKE_RE = new RegExp(`[${Object.keys(LOOKALIKES).join("")}]`, "g");
const LEET_RE = /[0134578@$!|+\u20ac9]/g;

/** Sentence punctuation that may open or close a word without being part of it. */
const OPENERS: ReadonlySet<string> = new Set(`("'\u201c\u2018`);
const CLOSERS: ReadonlySet<string> = new Set(`!?.,;:)"'\u201d\u2019`);

/** Maps l33t characters in one whitespace-separated chunk that has letters in it. */
function unleet(chunk: string): string {
  if (!/\p{L}/u.test(chunk)) return chunk; // "5", "24/7": numbers stay numbers
  // Sentence punctuation around the word is not part of it ("kill!" is not "killi"). Scanned
  // with loops: the regex /^(...*)(.*?)(...*)$/ took 10 s on "a" + "!" × 100 000 + "x".
  let start = 0;
  while (OPENERS.has(chunk.charAt(start))) start++; // stops at the letter at the latest
  let end = chunk.length;
  while (end > start && CLOSERS.has(chunk.charAt(end - 1))) end--;
  const word = chunk.slice(start, end).replace(LEET_RE, (c) => LEET[c]!);
  return chunk.slice(0, start) + word + chunk.slice(end);
}

/**
 * The canonical form of a text: lower-case ASCII words separated by single spaces. Accents and
 * look-alike letters are folded, l33t is read ("k1ll" -> "kill"), punctuation inside a word is
 * dropped ("k.i.l.l", "self-harm" -> "selfharm", "don't" -> "dont") and runs of three or more
 * single letters are joined ("k i l l" -> "kill").
 */
export function canonicalText(text: string): string {
  let s = text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
  s = s.replace(/[\u00ad\u200b-\u200d\u2060\ufeff]/g, "");
  s = s.replace(LOOKALIKE_RE, (c) => LOOKALIKES[c]!);
  s = s.replace(/\S+/g, unleet);
  s = s.replace(/(?<=\p{L})[.\-_*'\u2019`~^]+(?=\p{L})/gu, "");
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
