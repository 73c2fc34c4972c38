/**
 * SQLite-backed Deno KV (a local file shared by several processes, as under
 * `deno serve --parallel`) answers a write that meets another process's write with
 * "database is locked" (SQLITE_BUSY) instead of waiting. Nothing was written; the write can
 * simply be tried again.
 */

/** Whether a KV error is the transient "database is locked". */
export function isKvBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked/i.test(error.message);
}

/** Waits a jittered, growing pause before retry number `attempt` (1-based), at most ~10 ms. */
export function kvBackoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(10, 0.5 * 2 ** Math.min(attempt, 5));
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs a KV operation, trying again while the store is busy, up to `attempts` times and for up
 * to `budgetMs`: under a burst of other processes' writes on a loaded machine, 20 tries (~150 ms)
 * ran out. */
export async function retryWhileBusy<T>(
  operation: () => Promise<T>,
  attempts = Infinity,
  budgetMs = 2_000,
): Promise<T> {
  const deadline = performance.now() + budgetMs;
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (e) {
      if (!isKvBusy(e) || attempt >= attempts || performance.now() >= deadline) throw e;
      await kvBackoff(attempt);
    }
  }
}
