/**
 * The placeholders of one request (`[EMAIL_1]`, `[CARD_2]`...): the same value gets the same
 * placeholder, so the model can still tell values apart; the originals of restorable ones are
 * kept (in memory, for this request only) to be put back in the answer, also across the
 * deltas of a stream.
 */

/** Characters of a placeholder at most (`[SECRET_999999]`). */
const PLACEHOLDER_MAX = 16;
/** A placeholder in a text. */
const PLACEHOLDER = /\[[A-Z]{2,6}_\d{1,6}\]/g;

/** One request's placeholders. */
export class Vault {
  readonly #byValue = new Map<string, string>();
  readonly #counts = new Map<string, number>();
  readonly #originals = new Map<string, string>();

  /** The placeholder of `value` found as `type` (`EMAIL`); its original is put back in the
   * answer when `restore`. */
  placeholder(type: string, value: string, restore: boolean): string {
    const key = `${type}\u0000${value}`;
    let placeholder = this.#byValue.get(key);
    if (placeholder === undefined) {
      const n = (this.#counts.get(type) ?? 0) + 1;
      this.#counts.set(type, n);
      placeholder = `[${type}_${n}]`;
      this.#byValue.set(key, placeholder);
    }
    if (restore) this.#originals.set(placeholder, value);
    return placeholder;
  }

  /** Whether some value was given a placeholder. */
  get used(): boolean {
    return this.#byValue.size > 0;
  }

  /** `value` (JSON data) with every value given a placeholder replaced by it, in every string
   * wherever it is (longest first), the object keys as they are: for the request log, which shows
   * what the model saw, never the originals. */
  conceal(value: unknown): unknown {
    const found = [...this.#byValue].map(([key, placeholder]) => ({
      original: key.slice(key.indexOf("\u0000") + 1),
      placeholder,
    })).filter(({ original }) => original !== "");
    found.sort((a, b) => b.original.length - a.original.length);
    const text = (t: string) =>
      found.reduce((out, { original, placeholder }) => out.replaceAll(original, placeholder), t);
    const walk = (v: unknown): unknown =>
      typeof v === "string"
        ? text(v)
        : Array.isArray(v)
        ? v.map(walk)
        : v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]))
        : v;
    return walk(value);
  }

  /** Whether some placeholder is to be restored. */
  get restores(): boolean {
    return this.#originals.size > 0;
  }

  /** `text` with the restorable placeholders replaced by their originals. */
  restore(text: string): string {
    if (this.#originals.size === 0 || !text.includes("[")) return text;
    return text.replace(PLACEHOLDER, (p) => this.#originals.get(p) ?? p);
  }

  /** A restorer for a stream of deltas (one per content block). */
  streamRestorer(): StreamRestorer {
    return new StreamRestorer(this);
  }
}

/** Restores the placeholders of a stream's deltas, holding back the end of a delta that may
 * be the start of a placeholder split across deltas (at most {@link PLACEHOLDER_MAX}
 * characters). */
export class StreamRestorer {
  #held = "";
  constructor(readonly vault: Vault) {}

  /** The text to send for `delta` (possibly empty). */
  push(delta: string): string {
    const text = this.#held + delta;
    const open = text.lastIndexOf("[");
    const cut = open >= 0 && text.length - open < PLACEHOLDER_MAX && !text.includes("]", open)
      ? open
      : text.length;
    this.#held = text.slice(cut);
    return this.vault.restore(text.slice(0, cut));
  }

  /** The text held back, at the end of the block. */
  end(): string {
    const rest = this.#held;
    this.#held = "";
    return this.vault.restore(rest);
  }
}
