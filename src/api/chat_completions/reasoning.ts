import type { ReasoningOptions } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";
import {
  absent,
  invalidType,
  isObject,
  kindOf,
  type Obj,
  optionalBoolean,
  optionalInteger,
} from "./checks.ts";

const EFFORTS = ["minimal", "low", "medium", "high"] as const;
type Effort = typeof EFFORTS[number];

/**
 * How much the model may think: OpenAI's `reasoning_effort`, or OpenRouter's `reasoning`
 * object (`effort` or `max_tokens`, `enabled`, `exclude`). `enabled: false` turns thinking off;
 * `enabled: true` alone asks for OpenRouter's default, medium effort. `undefined` when the
 * caller said nothing about reasoning.
 */
export function parseReasoning(body: Obj): ReasoningOptions | undefined {
  const effort = parseEffort(body.reasoning_effort, "reasoning_effort");
  const raw = body.reasoning;
  if (absent(raw)) return effort === undefined ? undefined : { effort };
  if (!isObject(raw)) {
    throw invalidType(
      `\`reasoning\` must be an object like {"effort": "low"}, not ${kindOf(raw)}.`,
      "reasoning",
    );
  }
  const inner = parseEffort(raw.effort, "reasoning.effort");
  if (effort !== undefined && inner !== undefined && effort !== inner) {
    throw invalidValue(
      `\`reasoning_effort\` (${quote(effort)}) and \`reasoning.effort\` (${
        quote(inner)
      }) disagree; send one of them.`,
      "reasoning.effort",
    );
  }
  const budget = optionalInteger(raw, "max_tokens", 1, "reasoning.max_tokens");
  const chosen = effort ?? inner;
  if (chosen !== undefined && budget !== null) {
    throw invalidValue(
      "`reasoning` takes either an effort or `max_tokens`, not both.",
      "reasoning.max_tokens",
    );
  }
  optionalBoolean(raw, "exclude", "reasoning.exclude");
  const enabled = optionalBoolean(raw, "enabled", "reasoning.enabled");
  if (enabled === false) {
    if (chosen !== undefined || budget !== null) {
      throw invalidValue(
        "`reasoning.enabled` is false, but an effort or `max_tokens` was given.",
        "reasoning.enabled",
      );
    }
    return { disabled: true };
  }
  if (budget !== null) return { budgetTokens: budget };
  if (chosen !== undefined) return { effort: chosen };
  return enabled === true ? { effort: "medium" } : undefined;
}

/** Whether the caller asked for reasoning to be used but left out of the answer (OpenRouter's
 * `reasoning.exclude`); the body has passed {@link parseReasoning}. */
export function reasoningExcluded(body: Obj): boolean {
  return isObject(body.reasoning) && body.reasoning.exclude === true;
}

function parseEffort(value: unknown, param: string): Effort | undefined {
  if (absent(value)) return undefined;
  if (EFFORTS.includes(value as Effort)) return value as Effort;
  const message = `\`${param}\` must be ${EFFORTS.map((e) => `"${e}"`).join(", ")}, not ${
    kindOf(value)
  }.`;
  throw typeof value === "string" ? invalidValue(message, param) : invalidType(message, param);
}
