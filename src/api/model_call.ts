import type { ModelRecord } from "../catalogue/model.ts";
import { internalError } from "../errors.ts";
import type { RequestContext } from "../pipeline/context.ts";
import type { CallContext, Provider } from "../providers/types.ts";

/** The adapter and call context for a resolved model (see `pipeline/resolve.ts`). */
export function modelCall(
  ctx: RequestContext,
  record: ModelRecord,
): { provider: Provider; call: CallContext } {
  const provider = ctx.services.providers.get(record.provider);
  // resolve only returns models whose provider is available.
  if (!provider) throw internalError(ctx.requestId);
  return {
    provider,
    call: {
      signal: ctx.signal,
      requestId: ctx.requestId,
      upstreamModel: record.upstream_model,
      model: record,
      dropped: new Set(),
    },
  };
}
