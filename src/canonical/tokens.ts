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

/** How many tokens the text holds, without building them. */
export function countTokens(text: string): number {
  const re = new RegExp(TOKEN);
  let n = 0;
  while (re.exec(text) !== null) n++;
  return n;
}
