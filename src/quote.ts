/** How error messages quote what a caller sent: never more than a short excerpt. */

/** At most this many characters of a caller's value appear in an error message. */
export const QUOTE_CHARS = 100;

/** `text` cut to `max` characters (never inside a surrogate pair), with "…" when cut. */
export function clip(text: string, max = QUOTE_CHARS): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)}…`;
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
