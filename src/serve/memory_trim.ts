/**
 * Gives the memory a burst freed back to the system once the process has gone quiet. Deno's Rust
 * side (HTTP connections, each streamed body's buffers) allocates with glibc's malloc, which keeps
 * what is freed among blocks still in use; only `malloc_trim(0)` returns those pages. After 1,000
 * concurrent streams it took an idle Switchyard from 152 to 88 MB (README, Performance).
 */

/** Where glibc's libc lives on the Linux distributions Deno ships for (Debian's layout, which the
 * official Deno image has). The start task grants FFI to exactly these paths. */
export const LIBC_PATHS: readonly string[] = [
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
];

/**
 * `malloc_trim(0)` of the first libc in `paths` this process may open, or `null` when it may open
 * none (FFI not granted, not Linux, no glibc): then memory is simply not trimmed.
 */
export function libcTrim(paths: readonly string[] = LIBC_PATHS): (() => void) | null {
  for (const path of paths) {
    if (Deno.permissions.querySync({ name: "ffi", path }).state !== "granted") continue;
    try {
      const libc = Deno.dlopen(path, {
        malloc_trim: { parameters: ["usize"], result: "i32" },
      });
      return () => void libc.symbols.malloc_trim(0n);
    } catch {
      // Not there, or not glibc (musl has no malloc_trim): try the next.
    }
  }
  return null;
}

/** Options for {@link IdleTrimmer}. */
export interface IdleTrimmerOptions {
  /** Returns freed memory to the system (see {@link libcTrim}). */
  trim(): void;
  /** A count that changes whenever a request begins or ends. */
  activity(): number;
  /** How often activity is looked at; memory is trimmed after one whole interval without any,
   * once per quiet spell. */
  intervalMs: number;
}

/** Trims memory once after each busy spell, when a whole interval passed with no request
 * beginning or ending. Its timer does not keep the process alive. */
export class IdleTrimmer {
  readonly #options: IdleTrimmerOptions;
  readonly #timer: ReturnType<typeof setInterval>;
  /** The activity count at the last look, and at the last trim. */
  #seen: number;
  #trimmed: number;

  constructor(options: IdleTrimmerOptions) {
    this.#options = options;
    this.#seen = this.#trimmed = options.activity();
    this.#timer = setInterval(() => this.tick(), options.intervalMs);
    Deno.unrefTimer(this.#timer);
  }

  /** One look at the activity (the timer's; public for tests). */
  tick(): void {
    const now = this.#options.activity();
    if (now !== this.#seen) {
      this.#seen = now;
      return;
    }
    if (now === this.#trimmed) return;
    this.#trimmed = now;
    this.#options.trim();
  }

  /** Stops the timer. */
  close(): void {
    clearInterval(this.#timer);
  }
}
