/**
 * A request's guardrail verdicts as attributes of its server span (docs/observability.md): which
 * guardrails ran, at which stage, what each decided, which one blocked, and what they found by
 * type and count (never the values).
 */
import type { GuardrailVerdict } from "../guardrails/report.ts";
import type { AttributeValue } from "./otel.ts";

/**
 * The `switchyard.guardrail.*` attributes of `verdicts`: `names`, `stages` and `verdicts` (one
 * entry per guardrail that ran, in order), `blocked` (the first that blocked, when one did) and
 * `found` (`type:count`, summed over the guardrails, when they found anything). Empty when there
 * are none.
 */
export function guardrailAttributes(
  verdicts: readonly GuardrailVerdict[],
): Record<string, AttributeValue> {
  const final = verdicts;
  if (final.length === 0) return {};
  const attributes: Record<string, AttributeValue> = {
    "switchyard.guardrail.names": final.map((v) => v.name),
    "switchyard.guardrail.stages": final.map((v) => v.stage),
    "switchyard.guardrail.verdicts": final.map((v) => v.verdict),
  };
  const blocked = final.find((v) => v.verdict === "blocked" || v.verdict === "failed_closed");
  if (blocked) attributes["switchyard.guardrail.blocked"] = blocked.name;
  const found = new Map<string, number>();
  for (const v of final) {
    for (const [type, n] of Object.entries(v.found ?? {})) {
      found.set(type, (found.get(type) ?? 0) + n);
    }
  }
  if (found.size > 0) {
    attributes["switchyard.guardrail.found"] = [...found].map(([type, n]) => `${type}:${n}`);
  }
  return attributes;
}
