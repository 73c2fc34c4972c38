/**
 * The admit step: the request counts against its endpoint's limit scope (DESIGN §8), as its
 * caller (a key, or the client's IP); over a limit it is a 429 that reaches no handler and
 * reads no body. A store that fails makes the limits undecidable: 503.
 *
 * When the limiter holds the subject's count far below every limit and is idle
 * (`RateLimiter.likely`: an unloaded process, where the commit's fsync is most of a request's
 * time), its KV commit runs beside the steps after this one instead of before them: the request
 * is read, reserved and sent upstream while the count is committed, and nothing of the answer
 * leaves before the commit admits it. Should the commit refuse after all (other processes took the
 * margin, or the key changed), the work is stopped (its upstream call aborted) and the client
 * gets the refusal: the counts stay exact, and a refused request gets no byte of an answer.
 */
import type { Principal } from "../auth/principal.ts";
import type { Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { Admission, RateLimiter } from "../limits/limiter.ts";
import type { Next, Step } from "./compose.ts";
import type { RequestContext } from "./context.ts";
import type { StoreGuard } from "./store_guard.ts";

/** Admits requests of limited endpoints through `limiter`. */
export function admit(
  limiter: Pick<RateLimiter, "likely" | "admit">,
  store: StoreGuard,
  clock: Clock,
): Step<RequestContext> {
  return (ctx, next) => {
    const scope = ctx.endpoint.scope;
    if (scope === null) return next(ctx);
    store.check();
    const likely = limiter.likely(scope, ctx.caller, ctx.ip);
    const admission = limiter.admit(scope, ctx.caller, ctx.ip, likely !== null);
    return likely === null
      ? admitted(ctx, next, admission, store, clock)
      : overlapped(ctx, next, likely, admission, store, clock);
  };
}

async function admitted(
  ctx: RequestContext,
  next: Next<RequestContext>,
  admission: Promise<Admission>,
  store: StoreGuard,
  clock: Clock,
): Promise<Response> {
  try {
    takeAdmission(ctx, await admission, clock);
  } catch (e) {
    throw store.failure(e, ctx);
  }
  return await next(ctx);
}

/** Runs the steps after this one while `admission` is committed; answers only once it is. */
async function overlapped(
  ctx: RequestContext,
  next: Next<RequestContext>,
  likely: Principal,
  admission: Promise<Admission>,
  store: StoreGuard,
  clock: Clock,
): Promise<Response> {
  const stop = ctx.stoppable();
  ctx.principal = likely;
  const work = Promise.resolve().then(() => next(ctx));
  // Settled below in every case; this keeps an early rejection from counting as unhandled.
  work.catch(() => {});
  let refusal: ApiError;
  try {
    const decided = await admission;
    if (samePrincipal(decided.principal, likely)) {
      takeAdmission(ctx, decided, clock);
      return await work;
    }
    refusal = keyChanged();
  } catch (e) {
    refusal = store.failure(e, ctx);
  }
  ctx.refused = refusal;
  stop.abort(refusal);
  // The work ends soon once aborted; what it made is dropped (a stream's upstream is aborted).
  await work.then(() => {}, () => {});
  throw refusal;
}

/** Keeps what the limiter decided on the context: the principal, the window for the headers. */
function takeAdmission(ctx: RequestContext, admission: Admission, clock: Clock): void {
  ctx.principal = admission.principal;
  ctx.window = admission.window;
  ctx.admittedAt = clock.now();
}

/** Whether the admitted principal is the one the work ran as (a key's record unchanged: the
 * same object unless the limiter read it again, which a conflict on the counter also does). */
function samePrincipal(a: Principal, b: Principal): boolean {
  if (a.kind === "anonymous" || b.kind === "anonymous") return a.kind === b.kind;
  return a.key === b.key || JSON.stringify(a.key) === JSON.stringify(b.key);
}

function keyChanged(): ApiError {
  return new ApiError(
    503,
    "server_error",
    "The API key was changed while this request was being admitted; try again.",
    { code: "key_changed" },
  );
}
