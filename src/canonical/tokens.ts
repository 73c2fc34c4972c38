/**
 * The gateway's own tokenizer (the simulator's, and the estimate of back ends that cannot count
 * tokens): a token is a run of letters and digits or one other character,
 * with the whitespace before it. Tokens concatenate back to the text exactly, so a stream of
 * them reproduces the reply, and the same count serves prompt and completion usage.
 */
const TOKEN = /\s*(?:[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_])|\s+/gu;

/** The first `limit` tokens of the text, and whether more follow. Joining all the tokens of a
 * text gives the text back. */
export function takeTokens(text: string, limit = Infinity): { tokens: string[]; more: boolean } {
  const tokens: string[] = [];
  const re = new RegExp(TOKEN);
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (tokens.length >= limit) return { tokens, more: true };
    tokens.push(m[0]);
  }
  return { tokens, more: false };
}

/** What a character is to the tokenizer: part of a word, whitespace, or a token of its own. */
const WORD = 0;
const SPACE = 1;
const OTHER = 2;

/** The kinds of the ASCII characters. */
const ASCII_KINDS = Uint8Array.from({ length: 128 }, (_, c) => {
  if (/[\p{L}\p{N}_]/u.test(String.fromCharCode(c))) return WORD;
  return /\s/.test(String.fromCharCode(c)) ? SPACE : OTHER;
});

/** `STARTS[previous * 3 + kind]`: whether a character of `kind` after one of `previous` starts
 * a token (a word run's first character, or any other character but whitespace). */
const STARTS = Uint8Array.from({ length: 9 }, (_, i) => {
  const previous = Math.floor(i / 3);
  const kind = i % 3;
  return kind === OTHER || (kind === WORD && previous !== WORD) ? 1 : 0;
});

/** `PAIRS[previous << 14 | first << 7 | second]` for two ASCII characters after one of kind
 * `previous`: the tokens they start (the low two bits) and the second one's kind (above them). */
const PAIRS = new Uint8Array(3 << 14);
for (let previous = 0; previous < 3; previous++) {
  for (let first = 0; first < 128; first++) {
    for (let second = 0; second < 128; second++) {
      const a = ASCII_KINDS[first]!;
      const b = ASCII_KINDS[second]!;
      PAIRS[(previous << 14) | (first << 7) | second] = (STARTS[previous * 3 + a]! +
        STARTS[a * 3 + b]!) | (b << 2);
    }
  }
}

/**
 * How many tokens the text holds, without building them: as many as {@link takeTokens} gives,
 * counted in one pass over the characters (a word run or one other character is a token, with
 * the whitespace before it; whitespace at the end is one more). The regular expression took
 * 9 ms for an agent's 250 KB turn, half of what the gateway spent on it; this takes about 1,
 * each character outside ASCII classified once a call (two regular expressions per such
 * character were a third of that), two ASCII characters a step ({@link PAIRS}: 1.5x faster
 * than one a step on a Claude Code turn's 263,000 characters).
 */
export function countTokens(text: string): number {
  const length = text.length;
  let n = 0;
  let previous = SPACE;
  let wide: { kinds: Map<number, number>; word: RegExp; space: RegExp } | null = null;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (i + 1 < length) {
      const d = text.charCodeAt(i + 1);
      if ((c | d) < 128) {
        const pair = PAIRS[(previous << 14) | (c << 7) | d]!;
        n += pair & 3;
        previous = pair >> 2;
        i++;
        continue;
      }
    }
    let kind: number;
    if (c < 128) {
      kind = ASCII_KINDS[c]!;
    } else {
      // A character outside the BMP is two code units.
      const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < length &&
        (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
      const code = pair ? (c - 0xd800) * 0x400 + text.charCodeAt(i + 1) - 0xdc00 + 0x10000 : c;
      wide ??= { kinds: new Map(), word: /[\p{L}\p{N}_]/uy, space: /\s/uy };
      let known = wide.kinds.get(code);
      if (known === undefined) {
        wide.word.lastIndex = i;
        wide.space.lastIndex = i;
        known = wide.word.test(text) ? WORD : wide.space.test(text) ? SPACE : OTHER;
        wide.kinds.set(code, known);
      }
      kind = known;
      if (pair) i++;
    }
    n += STARTS[previous * 3 + kind]!;
    previous = kind;
  }
  return length > 0 && previous === SPACE ? n + 1 : n;
}
