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

/**
 * Turns batches of upstream events into batches of chunks. `translate` appends the chunks for
 * one event to `out` and says whether the event ended the stream (then the rest of its batch
 * is ignored). Chunks made before a failure in the same batch are yielded before the failure
 * is thrown. Returns whether the stream's end came.
 */
export async function* translateBatches<E>(
  batches: AsyncIterable<E[]>,
  translate: (event: E, out: ChatChunk[]) => boolean,
): AsyncGenerator<ChatChunk[], boolean, undefined> {
  for await (const events of batches) {
    const out: ChatChunk[] = [];
    let ended = false;
    try {
      for (const event of events) {
        if (translate(event, out)) {
          ended = true;
          break;
        }
      }
    } catch (e) {
      if (out.length > 0) yield out;
      throw e;
    }
    if (out.length > 0) yield out;
    if (ended) return true;
  }
  return false;
}

/** The chunks of a batched stream one by one. */
export async function* flattenBatches(
  batches: AsyncIterable<readonly ChatChunk[]>,
): AsyncGenerator<ChatChunk, void, undefined> {
  for await (const batch of batches) yield* batch;
}
