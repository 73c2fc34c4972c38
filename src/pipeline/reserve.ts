/**
 * The reserve step: a chat request of a caller with token limits (DESIGN §8) reserves the most
 * tokens it may use (its prompt estimate plus its maximum output) before its handler runs;
 * over a limit it is a 429 that reaches no upstream. Its settle hook replaces the reservation by
 * the usage the upstream reported.
 */
import type { Clock } from "../clock.ts";
import { reservationTokens } from "../limits/estimate.ts";
import type { TokenLedger, TokenSubject } from "../limits/ledger.ts";
import { ipSubject } from "../limits/subject.ts";
import { limitsFor, tokenLimitOf } from "../limits/windows.ts";
import type { Logger } from "../log/logger.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";
import type { SettleHook } from "./settle.ts";
import type { StoreGuard } from "./store_guard.ts";

/** The output bound of a request that names none and whose model has no default (spec §4.2). */
const DEFAULT_MAX_TOKENS = 256;

/** Reserves tokens for chat-scope requests through `ledger`. */
export function reserve(
  ledger: TokenLedger,
  store: StoreGuard,
  clock: Clock,
): Step<RequestContext> {
  return (ctx, next) => {
    if (ctx.endpoint.scope !== "chat" || !ctx.endpoint.json) return next(ctx);
    const { config } = ctx.services;
    const key = ctx.principal.kind === "key" ? ctx.principal.key : null;
    const limit = tokenLimitOf(limitsFor(config.limits, "chat", key));
    if (limit.per_minute === null && limit.per_day === null) return next(ctx);
    const subject: TokenSubject = key
      ? { kind: "key", id: key.id }
      : { kind: "ip", id: ipSubject(ctx.ip, config.server.ipv6_prefix) };
    return reserved(ctx, next, { ledger, store, clock, subject, limit });
  };
}

async function reserved(
  ctx: RequestContext,
  next: Next<RequestContext>,
  deps: {
    ledger: TokenLedger;
    store: StoreGuard;
    clock: Clock;
    subject: TokenSubject;
    limit: { per_minute: number | null; per_day: number | null };
  },
): Promise<Response> {
  const model = typeof ctx.body.model === "string"
    ? ctx.services.catalogue.get(ctx.body.model)
    : undefined;
  const tokens = reservationTokens(ctx.body, model?.default_max_tokens ?? DEFAULT_MAX_TOKENS);
  deps.store.check();
  try {
    const grant = await deps.ledger.reserve("chat", deps.subject, deps.limit, tokens);
    ctx.reservation = grant.reservation;
    ctx.tokenWindow = grant.window;
  } catch (e) {
    throw deps.store.failure(e, ctx);
  }
  return await next(ctx);
}

/**
 * The settle hook: the request's reservation becomes what it used: the usage reported (also
 * a disconnected stream's tokens so far, when counted); none for a request refused before any
 * output; the whole reservation for an answer that ended without a usage report.
 */
export function settleTokens(ledger: TokenLedger, logger: Logger): SettleHook {
  return (ctx, { status, usage }) => {
    const reservation = ctx.reservation;
    if (reservation === null) return;
    const used = usage !== null
      ? usage.input + usage.output
      : status >= 400 && !ctx.stream
      ? 0
      : reservation.tokens;
    ledger.settle(reservation, used).catch((e) =>
      logger.error("could not settle a token reservation", e, ctx.requestId)
    );
  };
}
