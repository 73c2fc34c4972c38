/** Ids of files and batches: ordered by creation time (so that a KV listing in reverse is newest
 * first), then random. */
import { randomBase62 } from "../auth/keys.ts";

/** A new id `prefix` + creation time (base 36, fixed width) + 16 random characters. */
export function timeOrderedId(prefix: string, nowMs: number): string {
  return prefix + Math.floor(nowMs).toString(36).padStart(9, "0") + randomBase62(16);
}
