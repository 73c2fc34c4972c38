/**
 * The `webhook` guardrail's call: the text to check POSTed as JSON to the operator's URL, its
 * verdict `{"action": "allow" | "block" | "redact", "text"?, "messages"?}` read back within
 * the guardrail's `timeout_ms`. A failure (timeout, a status other than 2xx, a body that is
 * not a verdict) throws; the caller applies `on_error`.
 */
import { followingAbort } from "../abort.ts";
import type { GuardrailConfig } from "../config/types.ts";
import type { HttpClient } from "../http/client/types.ts";
import { isObject } from "../validation/reader.ts";

/** Bytes of a webhook's answer at most. */
const MAX_ANSWER_BYTES = 1 << 20;

/** What a webhook decided. */
export interface WebhookVerdict {
  action: "allow" | "block" | "redact";
  /** `redact` of an answer: its text as it should read. */
  text?: string;
  /** `redact` of a request: each message's text as it should read, in order. */
  messages?: string[];
  /** Why, as the webhook says (a category, a rule): logged, never sent to the caller. */
  reason?: string;
}

/** What the webhook is sent: the stage, the model, and the request's messages or the
 * answer's text. */
export type WebhookBody =
  & { stage: "input" | "output"; model: string; guardrail: string }
  & ({ messages: { role: string; content: string }[] } | { text: string });

/** Why a webhook call failed (a short phrase for the error and the log). */
export class WebhookFailure extends Error {}

/** Asks the webhook of `guardrail` for its verdict on `body`. */
export async function askWebhook(
  http: HttpClient,
  guardrail: GuardrailConfig,
  token: string | null,
  body: WebhookBody,
  signal: AbortSignal,
): Promise<WebhookVerdict> {
  const abort = followingAbort(signal);
  const timer = setTimeout(
    () => abort.abort(new WebhookFailure(`no verdict within ${guardrail.timeout_ms} ms`)),
    guardrail.timeout_ms,
  );
  try {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const response = await http.request({
      method: "POST",
      url: guardrail.url!,
      headers,
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    const answer = await response.text(MAX_ANSWER_BYTES);
    if (response.status < 200 || response.status > 299) {
      throw new WebhookFailure(`the webhook answered ${response.status}`);
    }
    return readVerdict(answer.text);
  } catch (e) {
    if (abort.signal.reason instanceof WebhookFailure && !signal.aborted) throw abort.signal.reason;
    if (e instanceof WebhookFailure || signal.aborted) throw e;
    throw new WebhookFailure("the webhook could not be reached");
  } finally {
    clearTimeout(timer);
  }
}

/** A webhook's answer as a verdict, or a {@link WebhookFailure}. */
export function readVerdict(text: string): WebhookVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new WebhookFailure("the webhook's answer is not JSON");
  }
  if (!isObject(value) || !["allow", "block", "redact"].includes(value.action as string)) {
    throw new WebhookFailure('the webhook\'s answer has no "action" of allow, block or redact');
  }
  const verdict: WebhookVerdict = { action: value.action as WebhookVerdict["action"] };
  if (typeof value.text === "string") verdict.text = value.text;
  if (Array.isArray(value.messages) && value.messages.every((m) => typeof m === "string")) {
    verdict.messages = value.messages as string[];
  }
  if (typeof value.reason === "string") verdict.reason = value.reason.slice(0, 64);
  if (verdict.action === "redact" && verdict.text === undefined && !verdict.messages) {
    throw new WebhookFailure('the webhook\'s "redact" gives neither "text" nor "messages"');
  }
  return verdict;
}
