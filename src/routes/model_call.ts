import type { ModelRecord } from "../catalogue/model.ts";
import type { RequestContext } from "../context.ts";
import { internalError } from "../errors.ts";
import type { CallContext, Provider } from "../providers/types.ts";

/**
 * The adapter and call context for a resolved model; also records the model and provider in
 * the request's log record.
 */
export function modelCall(
  ctx: RequestContext,
  record: ModelRecord,
): { provider: Provider; call: CallContext } {
  ctx.log.model = record.id;
  ctx.log.provider = record.provider;
  const provider = ctx.services.providers.get(record.provider);
  // resolveModel only returns models whose provider is available.
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
