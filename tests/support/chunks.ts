import type { ChatChunk, Delta, FinishReason, Usage } from "../../src/types/openai.ts";

/** A chat chunk of the stream `chatcmpl-test` for model `sim-chat`, in the public shape. */
export function chunk(delta: Delta, finish: FinishReason | null = null): ChatChunk {
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1,
    model: "sim-chat",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** The final usage chunk of that stream. */
export function usageChunk(usage: Usage): ChatChunk {
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1,
    model: "sim-chat",
    choices: [],
    usage,
  };
}
