/** FNV-1a over a string's UTF-16 code units: a cheap, stable 32-bit hash for picking
 * deterministic variations (not for security). */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** A deterministic base62 identifier of `length` characters derived from `text`. */
export function stableId(text: string, length = 24): string {
  let out = "";
  let h = fnv1a(text);
  for (let round = 1; out.length < length; round++) {
    h = fnv1a(text, h ^ Math.imul(round, 0x9e3779b9));
    let x = h;
    for (let k = 0; k < 5 && out.length < length; k++) {
      out += ALPHABET[x % 62];
      x = Math.floor(x / 62);
    }
  }
  return out;
}
