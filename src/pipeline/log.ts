/**
 * The request log (DESIGN §9) as a settle hook: one record per request, written when it
 * settles, so a stream's record has its final status, duration and usage.
 */
import type { Logger } from "../log/logger.ts";
import type { Pricing } from "../config/types.ts";
import { costMicros, fromMicros } from "../limits/pricing.ts";
import type { LogRecord } from "../log/record.ts";
import type { SettleHook } from "./settle.ts";

/** Writes each settled request's record to `logger`, with its content when `includeContent`
 * (`logs.include_content`), and its cost when `pricingOf` its model gives a price. */
export function logRecord(
  logger: Logger,
  includeContent: boolean,
  pricingOf: (model: string) => Pricing | undefined = () => undefined,
): SettleHook {
  return (ctx, { status, error, usage, estimated, ms, reason }) => {
    const { principal } = ctx;
    const record: LogRecord = {
      ts: logger.timestamp(ctx.arrived),
      request_id: ctx.requestId,
      method: ctx.request.method,
      path: ctx.url.pathname,
      status,
      ms,
      ip: ctx.ip,
      key_id: principal.kind === "key" ? principal.key.id : null,
      model: ctx.model,
      provider: ctx.provider,
      // An estimate counts only the streamed output; the input is known if it was reported.
      prompt_tokens: usage === null || (estimated && ctx.usage === null) ? null : usage.input,
      completion_tokens: usage === null ? null : usage.output,
      error,
    };
    if (ctx.stream) record.stream = true;
    const pricing = usage !== null && ctx.model !== null ? pricingOf(ctx.model) : undefined;
    if (pricing && usage) record.cost = ctx.charged ? fromMicros(costMicros(usage, pricing)) : 0;
    if (estimated) record.estimated = true;
    if (reason !== null) record.reason = reason;
    if (ctx.guardrails !== null && ctx.guardrails.length > 0) record.guardrails = ctx.guardrails;
    if (ctx.cache !== null) record.cache = ctx.cache;
    if (ctx.onBehalf !== null) record.batch_id = ctx.onBehalf.batchId;
    if (includeContent && ctx.content !== undefined) {
      record.content = ctx.loggedContent ? ctx.loggedContent(ctx.content) : ctx.content;
    }
    logger.request(record);
  };
}
