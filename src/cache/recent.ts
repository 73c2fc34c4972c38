/**
 * The entries this process read or wrote last, in memory, bounded in bytes: a hit on one of them
 * costs no KV read (a KV read cost about 55-80 µs of CPU, more than the rest of a hit's cache
 * work; see bench/run.ts's cache rows). Safe to keep apart from other processes: an entry's key
 * is the hash of its question, so any copy of it is a right answer until its own expiry.
 */

interface Recent {
  expires: number;
  data: Uint8Array;
}

/** Recently used cache entries, least recently used dropped first past `maxBytes`. */
export class RecentEntries {
  readonly #entries = new Map<string, Recent>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The entry under `key` unless it expired by `now` (clock ms). */
  get(key: string, now: number): Uint8Array | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    this.#entries.delete(key);
    if (entry.expires <= now) {
      this.#bytes -= entry.data.length;
      return null;
    }
    this.#entries.set(key, entry); // now the most recently used
    return entry.data;
  }

  /** Keeps `data` under `key` until `expires` (clock ms); one over an eighth of the bound is
   * not kept, so that one large answer does not push out many small ones. */
  set(key: string, data: Uint8Array, expires: number): void {
    const prior = this.#entries.get(key);
    if (prior !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= prior.data.length;
    }
    if (data.length > this.#maxBytes / 8) return;
    this.#entries.set(key, { expires, data });
    this.#bytes += data.length;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.data.length;
    }
  }
}
