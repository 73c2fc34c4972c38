/** Timing KV commits where they are made (the KV commit latency metric). */

/** `commit`, reported to `observe` (in seconds) when it settles, failed ones too. */
export function timed<T>(commit: Promise<T>, observe?: (seconds: number) => void): Promise<T> {
  if (observe === undefined) return commit;
  const started = performance.now();
  const done = () => observe((performance.now() - started) / 1000);
  commit.then(done, done);
  return commit;
}
