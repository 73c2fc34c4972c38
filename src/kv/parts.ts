/**
 * Data larger than a small KV value, kept in parts. An entry over ~1 KB overflows SQLite's page
 * (the local store's table is a B-tree of whole entries), and every search of the store whose
 * path compares a key with such an entry reads all of it: 2,400 log rows of 30 KB in one value
 * each made a commit of 20 rate-limit counters cost twice the CPU (1.6-1.8 against 0.73 ms; the
 * same rows in parts: 0.73 ms). Parts keep every entry in its page.
 */

/** Bytes of one part at most: with a key of up to ~150 bytes, an entry stays under the ~1,000
 * bytes SQLite keeps in a 4 KiB page. */
export const PART_BYTES = 800;

/** `bytes` cut into parts of at most {@link PART_BYTES} (views of it, not copies; KV stores a
 * view's own bytes; `concatBytes` joins them); one empty part for no bytes. */
export function cutParts(bytes: Uint8Array): Uint8Array[] {
  if (bytes.length <= PART_BYTES) return [bytes];
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += PART_BYTES) {
    parts.push(bytes.subarray(at, at + PART_BYTES));
  }
  return parts;
}
