import type { Extras } from "./conversation.ts";
import type { FinishReason, Usage } from "./result.ts";

/** What a content block of a stream is. */
export type BlockKind =
  | { type: "text" }
  | { type: "reasoning"; redacted?: string; style?: string }
  | { type: "tool_call"; id: string; name: string }
  | { type: "refusal" };

/** A piece of a block's content. A text or refusal piece may carry the log probabilities of
 * its tokens (asked for with `logprobs`), as OpenAI-style back ends write them: `{token,
 * logprob, bytes, top_logprobs}` each. */
export type BlockDelta =
  | { type: "text"; text: string; logprobs?: readonly unknown[] }
  | { type: "reasoning"; text: string }
  | { type: "signature"; signature: string }
  | { type: "arguments"; json: string }
  | { type: "refusal"; text: string; logprobs?: readonly unknown[] };

/**
 * One event of a streamed answer (DESIGN §6.1), close to Anthropic's event model: `start`;
 * blocks opened, filled and closed by index (one block open at a time per index; indexes count
 * from 0 in order of opening); `usage` (possibly several, the last one counts); `finish`. A
 * failure after the stream began is thrown by the iterator as an `ApiError`, which the front
 * door renders as its protocol's error event.
 */
export type CanonicalEvent =
  | { type: "start"; id?: string; extras?: Extras }
  | { type: "block_start"; index: number; block: BlockKind }
  | { type: "block_delta"; index: number; delta: BlockDelta }
  | { type: "block_stop"; index: number }
  | { type: "usage"; usage: Usage }
  | { type: "finish"; reason: FinishReason; detail?: string; extras?: Extras };
