/** A controller that also aborts (with the same reason) when `signal` does: work that stops on
 * its own occasion and whenever its caller's signal fires. (One listener; `AbortSignal.any`
 * costs several microseconds per request.) */
export function followingAbort(signal: AbortSignal): AbortController {
  const abort = new AbortController();
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener("abort", () => abort.abort(signal.reason), { once: true });
  return abort;
}

/** `promise`, or a rejection with `signal`'s reason when it fires first (the work behind the
 * promise goes on, for others that wait for it: a shared token exchange). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}
