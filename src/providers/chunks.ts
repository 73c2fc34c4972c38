import type { ChatChunk, Delta, FinishReason, Usage } from "../types/openai.ts";

/** Writes the chunks of one streamed completion: same `id`, `created` and `model` on each. */
export class ChunkWriter {
  readonly id: string;
  readonly created: number;
  readonly model: string;

  constructor(id: string, created: number, model: string) {
    this.id = id;
    this.created = created;
    this.model = model;
  }

  /** A chunk carrying one delta of choice `index`, with no finish reason yet. */
  delta(delta: Delta, index = 0): ChatChunk {
    return this.#chunk([{ index, delta, logprobs: null, finish_reason: null }]);
  }

  /** The last chunk of choice `index`: an empty delta and the finish reason. */
  finish(reason: FinishReason, index = 0): ChatChunk {
    return this.#chunk([{ index, delta: {}, logprobs: null, finish_reason: reason }]);
  }

  /** The final usage chunk, with no choices. */
  usage(usage: Usage): ChatChunk {
    return { ...this.#chunk([]), usage };
  }

  #chunk(choices: ChatChunk["choices"]): ChatChunk {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      choices,
    };
  }
}

/** Usage with the total filled in. */
export function usageOf(prompt: number, completion: number): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

/** Where {@link ChunkBatches} reads upstream events (an `UpstreamResponse`). */
export interface EventSource<E> {
  /** The events of the next read (possibly none), or `null` at the end. */
  readEvents(): Promise<E[] | null>;
  /** The consumer has all it needs: let go of the rest. */
  release(): void;
  /** Stop: abort what is still running. */
  close(): void;
}

/** What {@link ChunkBatches} does with the events. */
export interface EventTranslation<E> {
  /** Appends the chunks for one event to `out`; says whether the event ended the stream (then
   * the rest of its read is ignored). */
  push(event: E, out: ChatChunk[]): boolean;
  /** The closing chunks when the events ran out without the end (or throws the 502). */
  end(): ChatChunk[];
}

/**
 * The chunks of a streamed upstream answer, grouped by the network read that brought them
 * (never an empty group): an async iterator written as a class, so that each read costs one
 * promise rather than the turns of nested async generators. Chunks made before a failure in
 * the same read are delivered before the failure is thrown. Stopping early (`return`) closes
 * the source.
 */
export class ChunkBatches<E> implements AsyncIterableIterator<ChatChunk[]> {
  readonly #open: () => Promise<EventSource<E>>;
  readonly #translation: EventTranslation<E>;
  #source: EventSource<E> | null = null;
  #done = false;
  /** A failure to throw on the next call, after the chunks its read made. */
  #failure: { error: unknown } | null = null;

  /** `open` makes the upstream call; it runs on the first `next()`. */
  constructor(open: () => Promise<EventSource<E>>, translation: EventTranslation<E>) {
    this.#open = open;
    this.#translation = translation;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<ChatChunk[], undefined>> {
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
      const out: ChatChunk[] = [];
      try {
        if (events === null) {
          this.#stop();
          for (const chunk of this.#translation.end()) out.push(chunk);
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

  return(): Promise<IteratorResult<ChatChunk[], undefined>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  #stop(): void {
    if (this.#done) return;
    this.#done = true;
    this.#source?.close();
  }
}

/** The chunks of a batched stream one by one. */
export async function* flattenBatches(
  batches: AsyncIterable<readonly ChatChunk[]>,
): AsyncGenerator<ChatChunk, void, undefined> {
  for await (const batch of batches) yield* batch;
}
