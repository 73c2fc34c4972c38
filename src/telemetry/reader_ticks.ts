/**
 * When Deno's metric reader asks this isolate to observe its instruments, so that the process
 * exits between two asks. Deno's exit waits for the reader (ext/telemetry,
 * `DenoPeriodicReader`), and a reader whose export tick came just before the exit waits for an
 * observation the exiting isolate can no longer make: the process hangs until it is killed
 * (Deno 2.9.6; a test in tests/telemetry/otel_test.ts shows it).
 */

/** Deno's export interval when `OTEL_METRIC_EXPORT_INTERVAL` is unset, 0 or unreadable. */
const DEFAULT_INTERVAL_MS = 60_000;
/** The longest wait for a quiet moment; past it the process exits anyway. */
const MAX_WAIT_MS = 2_000;

/** The metric export interval, read from `OTEL_METRIC_EXPORT_INTERVAL` as Deno reads it. */
export function exportIntervalMs(value: string | undefined): number {
  const ms = value !== undefined && /^\+?\d+$/.test(value) ? Number(value) : 0;
  return ms > 0 && Number.isSafeInteger(ms) ? ms : DEFAULT_INTERVAL_MS;
}

/** The reader's ticks as this isolate sees them (each time it is asked to observe). */
export class ReaderTicks {
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** A quarter of the interval, from 10 to 500 ms: how far from a tick exiting is safe. */
  readonly #marginMs: number;
  /** When the reader last asked; `null` before its first tick (it ticks from the start). */
  #last: number | null = null;

  /** `now` counts milliseconds from the process's start, as `performance.now()` does. */
  constructor(intervalMs: number, now: () => number = () => performance.now()) {
    this.#intervalMs = intervalMs;
    this.#now = now;
    this.#marginMs = Math.min(500, Math.max(10, intervalMs / 4));
  }

  /** Records an ask (called from an observable instrument's callback). */
  observed(): void {
    this.#last = this.#now();
  }

  /** Milliseconds to wait before exiting may be safe: 0 when the last ask is at least a margin
   * ago and the next is at least a margin away. A tick that is due and not yet seen (this
   * isolate was busy) is waited for. */
  waitMs(): number {
    const now = this.#now();
    const margin = this.#marginMs;
    const next = (this.#last ?? 0) + this.#intervalMs;
    if (next - now < margin) return Math.max(next - now, 0) + margin;
    if (this.#last !== null && now - this.#last < margin) return margin - (now - this.#last);
    return 0;
  }

  /** Resolves at a moment when exiting meets no tick, or after {@link MAX_WAIT_MS} and the
   * margins at most. */
  async quiet(): Promise<void> {
    const deadline = this.#now() + Math.min(this.#intervalMs, MAX_WAIT_MS) + 2 * this.#marginMs;
    for (let wait = this.waitMs(); wait > 0; wait = this.waitMs()) {
      const left = deadline - this.#now();
      if (left <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, left)));
    }
  }
}
