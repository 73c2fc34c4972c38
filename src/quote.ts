/** How error messages quote what a caller sent: never more than a short excerpt. */

/** At most this many characters of a caller's value appear in an error message. */
export const QUOTE_CHARS = 100;

/** `text` cut to at most `max` characters, an ellipsis (U+2026) included (never inside a
 * surrogate pair). */
export function clip(text: string, max = QUOTE_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, pairSafe(text, max - 1))}\u2026`;
}

/** `text` at most `max` characters long, its middle replaced by an ellipsis (U+2026) when cut:
 * for paths, whose end names the field (`\u2026.d.d.minLength`). */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = pairSafe(text, Math.ceil((max - 1) / 2));
  let tail = text.length - Math.floor((max - 1) / 2);
  const code = text.charCodeAt(tail);
  if (code >= 0xdc00 && code <= 0xdfff) tail++;
  return `${text.slice(0, head)}\u2026${text.slice(tail)}`;
}

/** `end`, or one less where it would split a surrogate pair of `text`. */
function pairSafe(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/** A caller's value as JSON for an error message, cut to {@link QUOTE_CHARS} characters. */
export function quote(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clip(value));
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined; // a cycle or a BigInt: no JSON value from a request body
  }
  return clip(json ?? String(value));
}
