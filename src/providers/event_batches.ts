import type { CanonicalEvent } from "../canonical/events.ts";
import type { PolledBatches } from "../canonical/polled_batches.ts";

/** Where {@link EventBatches} reads upstream events (an `UpstreamResponse`). */
export interface EventSource<E> {
  /** The events of the bytes that have arrived (possibly none), `null` at the end, or
   * `undefined` when {@link more} must wait for more. */
  takeEvents(): E[] | null | undefined;
  /** Waits for more bytes. */
  more(): Promise<void>;
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
 * brought them (never an empty group), as an async iterator or polled; except that the group
 * with the answer's first content ends there, and the rest of its read is the next group: a
 * client gets its first token without waiting for the rest of a burst to be translated. Events
 * made before a failure in the same read are delivered before the failure is thrown. Stopping
 * early (`return`) closes the source.
 */
export class EventBatches<E> implements AsyncIterableIterator<CanonicalEvent[]>, PolledBatches {
  /** Made once, then dropped: what it holds (the upstream request, with the whole prompt)
   * need not live as long as the stream. */
  #open: (() => Promise<EventSource<E>>) | null;
  /** The call being made (one, however often {@link more} is asked before it is). */
  #starting: Promise<void> | null = null;
  readonly #translation: EventTranslation<E>;
  #source: EventSource<E> | null = null;
  #done = false;
  /** A failure to throw on the next call, after the events its read made. */
  #failure: { error: unknown } | null = null;
  /** Whether a group has had content (a `block_delta`) yet. */
  #contentSent = false;
  /** The events of a read after the first content, for the next group. */
  #rest: { events: E[]; at: number } | null = null;

  /** `open` makes the upstream call; it runs on the first `next()` or `more()`. */
  constructor(open: () => Promise<EventSource<E>>, translation: EventTranslation<E>) {
    this.#open = open;
    this.#translation = translation;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<CanonicalEvent[], undefined>> {
    for (;;) {
      const batch = this.poll();
      if (batch === null) return { done: true, value: undefined };
      if (batch !== undefined) return { done: false, value: batch };
      await this.more();
    }
  }

  poll(): CanonicalEvent[] | null | undefined {
    if (this.#failure !== null) {
      const { error } = this.#failure;
      this.#failure = null;
      throw error;
    }
    while (!this.#done) {
      if (this.#source === null) return undefined;
      let events: E[] | null | undefined;
      let at = 0;
      if (this.#rest !== null) {
        ({ events, at } = this.#rest);
        this.#rest = null;
      } else {
        try {
          events = this.#source.takeEvents();
        } catch (e) {
          this.#stop();
          throw e;
        }
        if (events === undefined) return undefined;
      }
      const out: CanonicalEvent[] = [];
      try {
        if (events === null) {
          this.#stop();
          for (const event of this.#translation.end()) out.push(event);
        } else {
          for (let i = at; i < events.length; i++) {
            const before = out.length;
            if (this.#translation.push(events[i]!, out)) {
              this.#done = true;
              this.#source.release();
              break;
            }
            if (!this.#contentSent && hasContent(out, before)) {
              this.#contentSent = true;
              if (i + 1 < events.length) this.#rest = { events, at: i + 1 };
              break;
            }
          }
        }
      } catch (e) {
        this.#stop();
        if (out.length === 0) throw e;
        this.#failure = { error: e };
      }
      if (out.length > 0) return out;
    }
    return null;
  }

  more(): Promise<void> {
    if (this.#done) return Promise.resolve();
    if (this.#source === null) return this.#starting ??= this.#start();
    return this.#source.more().then(undefined, this.#failed);
  }

  async #start(): Promise<void> {
    const open = this.#open!;
    this.#open = null;
    this.#source = await open();
    // The consumer may have stopped while the call was being made.
    if (this.#done) this.#source.close();
  }

  readonly #failed = (e: unknown): never => {
    this.#stop();
    throw e;
  };

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

/** Whether `events` from `from` on have content. */
function hasContent(events: readonly CanonicalEvent[], from: number): boolean {
  for (let i = from; i < events.length; i++) if (events[i]!.type === "block_delta") return true;
  return false;
}
