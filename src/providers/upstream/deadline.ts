/**
 * The deadline of one upstream call: the client's signal and the provider's timeout as one
 * abort controller.
 */
import type { Expiries, Expiry } from "../../http/expiries.ts";

/** The abort reason of an upstream call that is over (one instance: a DOMException records a
 * stack when it is made, which costs microseconds per request). */
const RELEASED = new DOMException("The upstream call is over.", "AbortError");

/** The client's signal and the provider's deadline, as one abort controller for the call. The
 * deadlines of a provider's calls share one timer (see `http/expiries.ts`). */
export class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  readonly #expiry: Expiry;
  readonly #client: AbortSignal;
  readonly #onClientAbort = () => this.controller.abort(this.#client.reason);

  constructor(watch: Expiries, client: AbortSignal, ms: number) {
    this.#client = client;
    this.#expiry = watch.after(ms, () => this.#expire());
    if (client.aborted) this.close();
    else client.addEventListener("abort", this.#onClientAbort, { once: true });
  }

  /** Fires when the client leaves, the deadline passes or the call is over. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the client's own signal fired. */
  get clientGone(): boolean {
    return this.#client.aborted;
  }

  /** Milliseconds left before the deadline. */
  remaining(): number {
    return this.#expiry.at - performance.now();
  }

  /** Restarts the deadline `ms` from now (cheap enough for every read of a stream). */
  arm(ms: number): void {
    this.#expiry.restart(ms);
  }

  /** Stops the clock until the next {@link arm} (while nothing waits for the upstream). */
  disarm(): void {
    this.#expiry.at = Infinity;
  }

  /** The deadline passed: aborts the call. */
  #expire(): void {
    this.timedOut = true;
    this.controller.abort(new DOMException("The upstream deadline passed.", "TimeoutError"));
  }

  /** Stops watching and, unless `finished` (the answer was read to its end), aborts
   * whatever is still running. */
  close(finished = false): void {
    this.#expiry.clear();
    this.#client.removeEventListener("abort", this.#onClientAbort);
    if (!finished && !this.controller.signal.aborted) {
      this.controller.abort(this.#client.aborted ? this.#client.reason : RELEASED);
    }
  }
}
