/**
 * What a request's guardrails decided, for its log record and the metrics: per guardrail and
 * stage, the verdict and what was found by type and count, never the values.
 */
import type { GuardrailConfig, GuardrailStage } from "../config/types.ts";

/** A guardrail's verdict on a request: it found nothing (`passed`), redacted, blocked or only
 * logged what it found, or could not decide and let the call go on (`failed_open`) or stopped
 * it (`failed_closed`). */
export type Verdict =
  | "passed"
  | "logged"
  | "redacted"
  | "blocked"
  | "failed_open"
  | "failed_closed";

/** Which verdict a guardrail's record keeps when it reaches several (on a stream's windows). */
const WEIGHT: Readonly<Record<Verdict, number>> = {
  passed: 0,
  failed_open: 1,
  logged: 2,
  redacted: 3,
  failed_closed: 4,
  blocked: 5,
};

/** One guardrail's record in a request's log. */
export interface GuardrailVerdict {
  name: string;
  stage: GuardrailStage;
  verdict: Verdict;
  /** What it found, by type (`email`, `card`, `denied`, `violence`...) and count. */
  found?: Record<string, number>;
}

/** The records of one request's guardrails, in the order they first ran. */
export class GuardrailReport {
  readonly verdicts: GuardrailVerdict[] = [];

  /** The record of `guardrail` (made on first use, `passed`). */
  of(guardrail: GuardrailConfig): GuardrailVerdict {
    let entry = this.verdicts.find((v) => v.name === guardrail.name);
    if (!entry) {
      entry = { name: guardrail.name, stage: guardrail.stage, verdict: "passed" };
      this.verdicts.push(entry);
    }
    return entry;
  }

  /** Records `verdict` for `guardrail` (a weaker one than recorded is kept as found only), and
   * `count` more of `kind` found. */
  record(guardrail: GuardrailConfig, verdict: Verdict, kind?: string, count = 1): void {
    const entry = this.of(guardrail);
    if (WEIGHT[verdict] > WEIGHT[entry.verdict]) entry.verdict = verdict;
    if (kind !== undefined) {
      entry.found ??= {};
      entry.found[kind] = (entry.found[kind] ?? 0) + count;
    }
  }
}
