/**
 * Steps around a chat call's model (DESIGN §3): the cross-cutting concerns that need the
 * canonical request and answer rather than the HTTP request (the response cache, guardrails).
 * The chat model-call path (`api/shared/model_call.ts`) asks each step, in the order createApp
 * lists them, to wrap the adapter; the first step listed is the outermost.
 */
import type { ModelRecord } from "../catalogue/model.ts";
import type { Provider } from "../providers/types.ts";
import type { RequestContext } from "./context.ts";

/** What a call asks of the model: an answer (`chat`), a count of the prompt's tokens
 * (`count`: Messages' count_tokens, Gemini's countTokens), or embeddings (`embed`). */
export type ModelCallKind = "chat" | "count" | "embed";

/** One step around the model of a chat call. */
export interface ModelStep {
  /**
   * The adapter as this call sees it with the step (which may change the canonical request,
   * answer it without calling `provider`, or watch and change the answer, whole or streamed),
   * or `null` when the step has nothing to do for this call. A call that any step wraps is
   * never passed through as written: the steps see every call in canonical form.
   */
  around(
    provider: Provider,
    ctx: RequestContext,
    record: ModelRecord,
    kind: ModelCallKind,
  ): Provider | null;
}

/** `provider` wrapped by each step that acts on the call (the first listed outermost), or
 * `null` when none does; `kind` says what the call asks (a step may act on answers only). */
export function aroundModel(
  steps: readonly ModelStep[],
  provider: Provider,
  ctx: RequestContext,
  record: ModelRecord,
  kind: ModelCallKind = "chat",
): Provider | null {
  let wrapped: Provider | null = null;
  for (let i = steps.length - 1; i >= 0; i--) {
    const next = steps[i]!.around(wrapped ?? provider, ctx, record, kind);
    if (next !== null) wrapped = next;
  }
  return wrapped;
}
