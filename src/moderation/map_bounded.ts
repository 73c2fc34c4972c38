/**
 * Maps `items` through `fn`, at most `limit` calls at a time, giving the results in order.
 * Each call gets a signal that fires when `signal` does or when another call has failed: after
 * the first failure no new call starts, the running ones are aborted, and once all have ended
 * the promise rejects with that first failure (so nothing is left running behind it).
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  fn: (item: T, index: number, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i, controller.signal);
      } catch (error) {
        failure ??= { error };
        controller.abort();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
  return results;
}
