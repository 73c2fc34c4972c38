/**
 * What the chat completions front door answers (spec §2.5, §2.6), with OpenAI's later fields
 * and the conventions of OpenAI-compatible gateways for reasoning (`reasoning_content`, and
 * LiteLLM's `thinking_blocks`).
 */

/** A signed (or redacted) Anthropic thinking block, as LiteLLM passes it through the OpenAI
 * format; a client sends it back unchanged on the assistant message. */
export type ThinkingBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** A function call of the assistant. */
export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** Token counts; the details only where the back end reported them. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number; cache_creation_tokens?: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** The assistant's message of a completion. */
export interface WireMessage {
  role: "assistant";
  content: string | null;
  refusal: string | null;
  reasoning_content?: string;
  thinking_blocks?: ThinkingBlock[];
  tool_calls?: WireToolCall[];
}

/** One choice of a completion; `stop_reason` is the upstream's own reason when it says more
 * than `finish_reason` (Anthropic's `pause_turn`). */
export interface WireChoice {
  index: number;
  message: WireMessage;
  logprobs: unknown;
  finish_reason: string;
  stop_reason?: string;
}

/** A chat completion (spec §2.5). */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: WireChoice[];
  usage: WireUsage;
}

/** A piece of a tool call in a stream: the first has id, type and name, later ones only
 * argument text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

/** What one chunk adds to the message. */
export interface WireDelta {
  role?: "assistant";
  content?: string | null;
  refusal?: string | null;
  reasoning_content?: string;
  thinking_blocks?: ThinkingBlock[];
  tool_calls?: ToolCallDelta[];
}

/** One choice of a chunk. */
export interface ChunkChoice {
  index: number;
  delta: WireDelta;
  logprobs: unknown;
  finish_reason: string | null;
  stop_reason?: string;
}

/** A chat completion chunk (spec §2.6); `usage` only with `stream_options.include_usage`. */
export interface ChatChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: WireUsage | null;
}
