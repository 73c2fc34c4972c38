/** Polls `probe` until it returns a value (not `undefined`, `null` or `false`); fails with
 * `what` after `timeoutMs`. For effects that land after a response (deferred log records). */
export async function waitFor<T>(
  probe: () => T | undefined | null | false,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
