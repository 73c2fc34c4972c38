/**
 * Steps around a chat call's model (DESIGN §3): the cross-cutting concerns that need the
 * canonical request and answer rather than the HTTP request (the response cache, guardrails).
 * The chat model-call path (`api/shared/model_call.ts`) asks each step, in the order createApp
 * lists them, to wrap the adapter; the first step listed is the outermost.
 */
import type { ModelRecord } from "../catalogue/model.ts";
import type { Provider } from "../providers/types.ts";
import type { RequestContext } from "./context.ts";

/** One step around the model of a chat call. */
export interface ModelStep {
  /**
   * The adapter as this call sees it with the step (which may change the canonical request,
   * answer it without calling `provider`, or watch and change the answer, whole or streamed),
   * or `null` when the step has nothing to do for this call. A call that any step wraps is
   * never passed through as written: the steps see every call in canonical form.
   */
  around(provider: Provider, ctx: RequestContext, record: ModelRecord): Provider | null;
}

/** `provider` wrapped by each step that acts on the call (the first listed outermost), or
 * `null` when none does. */
export function aroundModel(
  steps: readonly ModelStep[],
  provider: Provider,
  ctx: RequestContext,
  record: ModelRecord,
): Provider | null {
  let wrapped: Provider | null = null;
  for (let i = steps.length - 1; i >= 0; i--) {
    const next = steps[i]!.around(wrapped ?? provider, ctx, record);
    if (next !== null) wrapped = next;
  }
  return wrapped;
}
