/** The errors a guardrail answers with, in every front door's shape (an ApiError). */
import type { GuardrailConfig } from "../config/types.ts";
import { ApiError } from "../errors.ts";

/** What each finding's kind is called in an error message. */
const NAMES: Readonly<Record<string, string>> = {
  email: "an e-mail address",
  phone: "a phone number",
  card: "a payment card number",
  iban: "an IBAN",
  ssn: "a US social security number",
  ip: "an IP address",
  secret: "a secret (an API key or token)",
  denied: "denied content",
};

/** 400 `guardrail_blocked`: the guardrail found `what` (a finding's kind, or a moderation
 * category) in the request or the answer. */
export function guardrailBlocked(guardrail: GuardrailConfig, what: string): ApiError {
  const side = guardrail.stage === "input" ? "The request" : "The answer";
  const found = NAMES[what] ?? `content flagged for ${what}`;
  return new ApiError(
    400,
    "invalid_request_error",
    `${side} was blocked by the guardrail "${guardrail.name}" (${guardrail.type}): it contains ${found}.`,
    { code: "guardrail_blocked" },
  );
}

/** 503 `guardrail_unavailable`: the guardrail could not decide (its moderation model or
 * webhook failed) and fails closed (`on_error: "block"`). */
export function guardrailUnavailable(guardrail: GuardrailConfig, why: string): ApiError {
  return new ApiError(
    503,
    "server_error",
    `The guardrail "${guardrail.name}" (${guardrail.type}) could not check the ${
      guardrail.stage === "input" ? "request" : "answer"
    } (${why}), and blocks what it cannot check.`,
    { code: "guardrail_unavailable" },
  );
}
