import type { ReasoningOptions } from "../../canonical/conversation.ts";
import type { Effort, Message, ThinkingConfig } from "../../types/anthropic.ts";

/** Anthropic's smallest `budget_tokens`. */
const MIN_BUDGET = 1024;

/**
 * Thinking for OpenAI's reasoning efforts: a `budget_tokens`, or for adaptive models the
 * `output_config.effort`.
 *
 * | effort  | budget_tokens | output_config.effort |
 * | ------- | ------------- | -------------------- |
 * | minimal | 1024          | low                  |
 * | low     | 2048          | low                  |
 * | medium  | 8192          | medium               |
 * | high    | 16384         | high                 |
 *
 * `minimal` is Anthropic's minimum; `high` with a default answer length stays within the 32k
 * output tokens of the smallest thinking models (Opus 4 and 4.1).
 */
const EFFORTS: Record<NonNullable<ReasoningOptions["effort"]>, { budget: number; effort: Effort }> =
  {
    minimal: { budget: MIN_BUDGET, effort: "low" },
    low: { budget: 2048, effort: "low" },
    medium: { budget: 8192, effort: "medium" },
    high: { budget: 16384, effort: "high" },
  };

/** Thinking as the Messages API takes it, and the `max_tokens` that leaves room for it. */
export interface AnthropicThinking {
  thinking: ThinkingConfig;
  maxTokens: number;
  /** `output_config.effort`, for adaptive thinking. */
  effort?: Effort;
}

/** Whether the request asks the model to think (an effort or a budget, not disabled). */
export function wantsThinking(reasoning: ReasoningOptions): boolean {
  return reasoning.disabled !== true &&
    (reasoning.effort !== undefined || reasoning.budgetTokens !== undefined);
}

/**
 * The thinking for a request that {@link wantsThinking}: a given `budgetTokens` wins over the
 * effort (raised to Anthropic's minimum of 1024). `budget_tokens` must be below `max_tokens`,
 * which counts thinking and answer together: when the caller's `maxTokens` is not above the
 * budget, `max_tokens` becomes budget + `maxTokens`, so the answer keeps the length the
 * caller allowed it. Adaptive thinking has no budget: its effort is the one of the table, or
 * for a budget the smallest effort whose budget covers it.
 */
export function toAnthropicThinking(
  reasoning: ReasoningOptions,
  mode: "budget" | "adaptive",
  maxTokens: number,
): AnthropicThinking {
  const budget = reasoning.budgetTokens !== undefined
    ? Math.max(MIN_BUDGET, Math.floor(reasoning.budgetTokens))
    : EFFORTS[reasoning.effort ?? "medium"].budget;
  if (mode === "adaptive") {
    const effort = reasoning.effort !== undefined
      ? EFFORTS[reasoning.effort].effort
      : budget <= EFFORTS.low.budget
      ? "low"
      : budget <= EFFORTS.medium.budget
      ? "medium"
      : "high";
    return { thinking: { type: "adaptive" }, maxTokens, effort };
  }
  return {
    thinking: { type: "enabled", budget_tokens: budget },
    maxTokens: maxTokens > budget ? maxTokens : budget + maxTokens,
  };
}

/**
 * Whether thinking may be turned on for these messages. Mid tool loop (the last user turn
 * holds tool results) Anthropic requires the assistant turn with the calls to start with a
 * thinking block, and answers 400 otherwise: as when the calls came from another model, or
 * from a client that does not keep reasoning (OpenAI chat clients).
 */
export function thinkingCanContinue(messages: readonly Message[]): boolean {
  const [calls, results] = messages.slice(-2);
  if (calls?.role !== "assistant" || results?.role !== "user") return true;
  if (!blocksOf(results).some((b) => b.type === "tool_result")) return true;
  const first = blocksOf(calls)[0];
  return first?.type === "thinking" || first?.type === "redacted_thinking";
}

function blocksOf(message: Message): readonly { type: string }[] {
  return typeof message.content === "string" ? [{ type: "text" }] : message.content;
}
