/** A controller that also aborts (with the same reason) when `signal` does: work that stops on
 * its own occasion and whenever its caller's signal fires. (One listener; `AbortSignal.any`
 * costs several microseconds per request.) */
export function followingAbort(signal: AbortSignal): AbortController {
  const abort = new AbortController();
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener("abort", () => abort.abort(signal.reason), { once: true });
  return abort;
}
