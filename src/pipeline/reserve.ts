/**
 * The reserve step (DESIGN §8): a chat request of a caller with token limits, or of a key with
 * a budget on a priced model, reserves the most it may use (its prompt estimate plus its
 * maximum output: tokens, and their cost) before its handler runs; over a limit it is a 429 that
 * reaches no upstream. Its settle hook replaces the reservations by what the request used.
 */
import { DEFAULT_MAX_TOKENS } from "../canonical/conversation.ts";
import { worstCaseTokens } from "../limits/estimate.ts";
import type { Ledger } from "../limits/ledger.ts";
import { costMicros, worstCostMicros } from "../limits/pricing.ts";
import { budgetLimits } from "../limits/budget.ts";
import { spendKey } from "../limits/spend.ts";
import { ipSubject } from "../limits/subject.ts";
import { tokenKey, type TokenSubject, tokenSubjectName } from "../limits/tokens.ts";
import { limitsFor, tokenLimitOf } from "../limits/windows.ts";
import type { Logger } from "../log/logger.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";
import type { Held } from "./held.ts";
import type { SettleHook } from "./settle.ts";
import type { StoreGuard } from "./store_guard.ts";

/** The ledgers the step reserves in. */
export interface Ledgers {
  tokens: Ledger;
  spend: Ledger;
}

/** Reserves tokens and spend for metered requests (chat calls, embeddings) in `ledgers`: the
 * chat scope's token limits count both. */
export function reserve(ledgers: Ledgers, store: StoreGuard): Step<RequestContext> {
  return (ctx, next) => {
    if (!ctx.endpoint.metered || !ctx.endpoint.json) return next(ctx);
    const { config, catalogue } = ctx.services;
    const key = ctx.principal.kind === "key" ? ctx.principal.key : null;
    const limit = tokenLimitOf(limitsFor(config.limits, "chat", key));
    const tokenLimited = limit.per_minute !== null || limit.per_day !== null;
    const budget = key?.budget ? budgetLimits(key.budget) : null;
    const budgeted = budget !== null && (budget[0] !== null || budget[1] !== null);
    if (!tokenLimited && !budgeted) return next(ctx);
    const id = namedModel(ctx);
    const model = id !== undefined ? catalogue.get(id) : undefined;
    const pricing = budgeted ? model?.pricing : undefined;
    if (!tokenLimited && pricing === undefined) return next(ctx);
    // A refusal is logged with the model it was reckoned for.
    if (model) ctx.model = model.id;
    return reserved(ctx, next, async () => {
      // Only chat calls have output tokens (embeddings answer vectors).
      const output = ctx.endpoint.scope === "chat"
        ? model?.default_max_tokens ?? DEFAULT_MAX_TOKENS
        : 0;
      const worst = worstCaseTokens(ctx.body, output);
      const held: Held = { input: worst.input };
      ctx.held = held;
      if (tokenLimited) {
        const subject: TokenSubject = key
          ? { kind: "key", id: key.id }
          : { kind: "ip", id: ipSubject(ctx.ip, config.server.ipv6_prefix) };
        const grant = await ledgers.tokens.reserve(
          tokenKey("chat", subject),
          [limit.per_minute, limit.per_day],
          worst.input + worst.output,
          tokenSubjectName(subject),
        );
        held.tokens = grant.reservation;
        ctx.tokenWindow = grant.window;
      }
      if (key && budget && pricing) {
        const cost = worstCostMicros(worst.input, worst.output, pricing);
        const grant = await ledgers.spend.reserve(spendKey(key.id), budget, cost, "");
        held.spend = { reservation: grant.reservation, pricing };
      }
    }, store);
  };
}

/** The model a metered request names: its body's `model`, else the model of a Gemini path
 * (`models/{model}:{method}`). */
function namedModel(ctx: RequestContext): string | undefined {
  if (typeof ctx.body.model === "string") return ctx.body.model;
  const segment = ctx.params.id;
  const at = segment?.lastIndexOf(":") ?? -1;
  return at > 0 ? segment!.slice(0, at) : undefined;
}

async function reserved(
  ctx: RequestContext,
  next: Next<RequestContext>,
  reserveAll: () => Promise<void>,
  store: StoreGuard,
): Promise<Response> {
  store.check();
  try {
    await reserveAll();
  } catch (e) {
    throw store.failure(e, ctx);
  }
  return await next(ctx);
}

/**
 * The settle hook: each reservation becomes what the request used: its usage as reported; for a
 * stream cut before its usage report, the tokens it streamed so far and the prompt's estimate;
 * nothing for a request answered with an error before any output; the whole reservation for an
 * answer that ended with no usage report and nothing streamed.
 * (A reservation refused partway, tokens held but spend refused, gives the tokens back.)
 */
export function settleReservations(ledgers: Ledgers, logger: Logger): SettleHook {
  return (ctx, { status, usage: settled, estimated }) => {
    const held = ctx.held;
    if (held === null) return;
    // A stream cut before any usage report has its output counted from the text it streamed,
    // and its prompt by the reservation's estimate.
    const usage = settled !== null && estimated && ctx.usage === null
      ? { ...settled, input: held.input }
      : settled;
    const failed = (e: unknown) => logger.error("could not settle a reservation", e, ctx.requestId);
    // A request refused after its work began (see the admit step) got nothing: it uses nothing.
    // A cache hit that its model's cache does not charge (`ctx.charged`) uses nothing either.
    const unused = !ctx.charged || ctx.refused !== null ||
      (usage === null && status >= 400 && !ctx.stream);
    if (held.tokens) {
      const used = unused ? 0 : usage !== null ? usage.input + usage.output : held.tokens.amount;
      ledgers.tokens.settle(held.tokens, used).catch(failed);
    }
    if (held.spend) {
      const { reservation, pricing } = held.spend;
      const used = unused ? 0 : usage !== null ? costMicros(usage, pricing) : reservation.amount;
      ledgers.spend.settle(reservation, used).catch(failed);
    }
  };
}
