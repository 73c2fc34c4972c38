import type { CanonicalEvent } from "../canonical/events.ts";

/** Where {@link EventBatches} reads upstream events (an `UpstreamResponse`). */
export interface EventSource<E> {
  /** The events of the next read (possibly none), or `null` at the end. */
  readEvents(): Promise<E[] | null>;
  /** The consumer has all it needs: let go of the rest. */
  release(): void;
  /** Stop: abort what is still running. */
  close(): void;
}

/** What {@link EventBatches} does with the events. */
export interface EventTranslation<E> {
  /** Appends the canonical events for one upstream event to `out`; says whether the event
   * ended the stream (then the rest of its read is ignored). */
  push(event: E, out: CanonicalEvent[]): boolean;
  /** The closing events when the upstream's ran out without its end (or throws the 502). */
  end(): CanonicalEvent[];
}

/**
 * The canonical events of a streamed upstream answer, grouped by the network read that
 * brought them (never an empty group): an async iterator written as a class, so that each read
 * costs one promise rather than the turns of nested async generators. Events made before a
 * failure in the same read are delivered before the failure is thrown. Stopping early
 * (`return`) closes the source.
 */
export class EventBatches<E> implements AsyncIterableIterator<CanonicalEvent[]> {
  readonly #open: () => Promise<EventSource<E>>;
  readonly #translation: EventTranslation<E>;
  #source: EventSource<E> | null = null;
  #done = false;
  /** A failure to throw on the next call, after the events its read made. */
  #failure: { error: unknown } | null = null;

  /** `open` makes the upstream call; it runs on the first `next()`. */
  constructor(open: () => Promise<EventSource<E>>, translation: EventTranslation<E>) {
    this.#open = open;
    this.#translation = translation;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<CanonicalEvent[], undefined>> {
    if (this.#failure !== null) {
      const { error } = this.#failure;
      this.#failure = null;
      throw error;
    }
    if (this.#source === null && !this.#done) {
      this.#source = await this.#open();
      // The consumer may have stopped while the call was being made.
      if (this.#done) this.#source.close();
    }
    while (!this.#done) {
      let events: E[] | null;
      try {
        events = await this.#source!.readEvents();
      } catch (e) {
        this.#stop();
        throw e;
      }
      const out: CanonicalEvent[] = [];
      try {
        if (events === null) {
          this.#stop();
          for (const event of this.#translation.end()) out.push(event);
        } else {
          for (const event of events) {
            if (this.#translation.push(event, out)) {
              this.#done = true;
              this.#source!.release();
              break;
            }
          }
        }
      } catch (e) {
        this.#stop();
        if (out.length === 0) throw e;
        this.#failure = { error: e };
      }
      if (out.length > 0) return { done: false, value: out };
    }
    return { done: true, value: undefined };
  }

  return(): Promise<IteratorResult<CanonicalEvent[], undefined>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  #stop(): void {
    if (this.#done) return;
    this.#done = true;
    this.#source?.close();
  }
}
