import type { ReasoningOptions } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { type Fields, isObject, OPTIONAL } from "../../validation/reader.ts";

const EFFORTS = ["minimal", "low", "medium", "high"] as const;
const BUDGET = { optional: true, min: 1 } as const;

/**
 * How much the model may think: OpenAI's `reasoning_effort`, or OpenRouter's `reasoning`
 * object (`effort` or `max_tokens`, `enabled`, `exclude`). `enabled: false` turns thinking off;
 * `enabled: true` alone asks for OpenRouter's default, medium effort. `undefined` when the
 * caller said nothing about reasoning.
 */
export function parseReasoning(body: Fields): ReasoningOptions | undefined {
  const effort = body.oneOf("reasoning_effort", EFFORTS, OPTIONAL);
  const reasoning = body.object("reasoning", OPTIONAL);
  if (reasoning === undefined) return effort === undefined ? undefined : { effort };
  const inner = reasoning.oneOf("effort", EFFORTS, OPTIONAL);
  if (effort !== undefined && inner !== undefined && effort !== inner) {
    throw reasoning.get("effort").invalid(
      `expected the same effort as 'reasoning_effort' (${quote(effort)}), but got ${
        quote(inner)
      }; send one of them`,
    );
  }
  const budget = reasoning.integer("max_tokens", BUDGET);
  const chosen = effort ?? inner;
  if (chosen !== undefined && budget !== undefined) {
    throw reasoning.get("max_tokens").invalid(
      "'reasoning' takes either an effort or 'max_tokens', not both",
    );
  }
  reasoning.boolean("exclude", OPTIONAL);
  const enabled = reasoning.boolean("enabled", OPTIONAL);
  if (enabled === false) {
    if (chosen !== undefined || budget !== undefined) {
      throw reasoning.get("enabled").invalid(
        "expected true when an effort or 'max_tokens' is given, but got false",
      );
    }
    return { disabled: true };
  }
  if (budget !== undefined) return { budgetTokens: budget };
  if (chosen !== undefined) return { effort: chosen };
  return enabled === true ? { effort: "medium" } : undefined;
}

/** Whether the caller asked for reasoning to be used but left out of the answer (OpenRouter's
 * `reasoning.exclude`); the body has passed {@link parseReasoning}. */
export function reasoningExcluded(body: Record<string, unknown>): boolean {
  return isObject(body.reasoning) && body.reasoning.exclude === true;
}
