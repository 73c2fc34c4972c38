/**
 * A stream of canonical event batches that can also be polled: the batch that the bytes at
 * hand make, or a wait for more. A consumer that polls runs no async function per batch,
 * where an async iterator's `next` is one more for every chunk of a stream (a paced stream
 * pays for each async frame between its socket read and its client write, once a chunk).
 */
import type { CanonicalEvent } from "./events.ts";

/** Batches that can be polled besides being iterated. */
export interface PolledBatches extends AsyncIterable<CanonicalEvent[]> {
  /** The next batch if what has arrived makes one, `null` at the end, `undefined` when
   * {@link more} must wait. Throws the stream's failure (once its earlier events are out). */
  poll(): CanonicalEvent[] | null | undefined;
  /** Waits for more (the first call may start the stream). */
  more(): Promise<void>;
  /** Stops early. */
  return(): Promise<IteratorResult<CanonicalEvent[], undefined>>;
}

/** Whether `batches` can be polled. */
export function isPolled(batches: AsyncIterable<CanonicalEvent[]>): batches is PolledBatches {
  const candidate = batches as Partial<PolledBatches>;
  return typeof candidate.poll === "function" && typeof candidate.more === "function";
}
