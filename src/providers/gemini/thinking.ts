import type { ReasoningOptions } from "../../canonical/conversation.ts";
import type { ThinkingConfig } from "./types.ts";

/**
 * Thinking budgets for OpenAI's reasoning efforts (Gemini 3 still takes `thinkingBudget`
 * beside its `thinkingLevel`; 512 is the smallest budget every 2.5 model accepts, 24576 the
 * largest of the Flash models).
 */
const BUDGETS: Record<NonNullable<ReasoningOptions["effort"]>, number> = {
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
};

/**
 * `generationConfig.thinkingConfig` for the request's reasoning options: off -> a budget of 0;
 * a budget -> that budget; an effort -> the budget of the table; in both cases with
 * `includeThoughts`, so that thought summaries come back as reasoning. `undefined` when the
 * request says nothing (the model's default).
 */
export function toGeminiThinking(
  reasoning: ReasoningOptions | undefined,
): ThinkingConfig | undefined {
  if (reasoning === undefined) return undefined;
  if (reasoning.disabled === true) return { thinkingBudget: 0 };
  if (reasoning.budgetTokens !== undefined) {
    return {
      thinkingBudget: Math.max(0, Math.floor(reasoning.budgetTokens)),
      includeThoughts: true,
    };
  }
  if (reasoning.effort !== undefined) {
    return { thinkingBudget: BUDGETS[reasoning.effort], includeThoughts: true };
  }
  return undefined;
}
