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
