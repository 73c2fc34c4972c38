/**
 * The app's one listener on its KV queue (`kv.listenQueue` may be called once per KV handle):
 * messages carry a `kind`, and each kind has one handler. Delivery is at least once: a handler
 * that throws has its message delivered again later (by any instance on the same KV), so
 * handlers are idempotent.
 */

/** A queue message: its kind picks the handler. */
export interface QueueMessage {
  kind: string;
}

/** Handles one kind of message; throwing has the message delivered again. */
export type QueueHandler = (message: QueueMessage) => Promise<void>;

/** Dispatches the messages of a KV handle's queue by kind, until closed. */
export class QueueDispatcher {
  readonly #handlers = new Map<string, QueueHandler>();
  readonly #running = new Set<Promise<void>>();
  #closed = false;
  #listening = false;

  /** Listens on `kv`; with `own`, the handle is the dispatcher's, closed by {@link close} (a
   * listener ends only with its handle). */
  constructor(
    readonly kv: Deno.Kv,
    readonly onError: (message: string, error: unknown) => void,
    readonly own = false,
  ) {}

  /** Handles messages of `kind` with `handler` (one handler per kind). */
  on(kind: string, handler: QueueHandler): void {
    if (this.#handlers.has(kind)) throw new Error(`a queue handler for ${kind} exists`);
    this.#handlers.set(kind, handler);
  }

  /** Starts listening (once). The listener ends when the KV handle is closed. */
  listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    this.kv.listenQueue((value: unknown) => this.#deliver(value)).catch((e) =>
      this.onError("the KV queue listener stopped", e)
    );
  }

  #deliver(value: unknown): Promise<void> {
    // A closing app takes no new work: the message is delivered again later, here or elsewhere.
    if (this.#closed) return Promise.reject(new Error("the app is closing"));
    const kind = typeof value === "object" && value !== null
      ? (value as Record<string, unknown>).kind
      : undefined;
    const handler = typeof kind === "string" ? this.#handlers.get(kind) : undefined;
    // Not ours (another version's message, or garbage): dropped, not retried forever.
    if (handler === undefined) return Promise.resolve();
    const run = handler(value as QueueMessage).catch((e) => {
      this.onError(`a ${kind} queue message failed (it will be delivered again)`, e);
      throw e;
    });
    const tracked = run.then(() => {}, () => {});
    this.#running.add(tracked);
    tracked.then(() => this.#running.delete(tracked));
    return run;
  }

  /** Takes no new messages and waits for the ones being handled; then closes its own handle,
   * which ends the listener (the messages it did not take stay queued). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#running);
    if (this.own) this.kv.close();
  }
}
