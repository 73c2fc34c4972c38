/**
 * Settling a request (DESIGN §3): once, after its response was sent or its stream ended, also
 * on an error, a client that left and a stream cut short, its settle hooks run in order with
 * how it ended and its final usage. The log record is written by one hook; the ledger's token
 * and spend settlement plugs in as another.
 */
import type { Usage } from "../canonical/result.ts";
import type { Logger } from "../log/logger.ts";
import type { Next } from "./compose.ts";
import type { RequestContext, SettleRunner } from "./context.ts";

/** How a request ended. */
export interface Settlement {
  status: number;
  /** The error code sent to the client (`client_disconnected` when it left), or `null`. */
  error: string | null;
  /** The call's final usage, or `null` when no model was called (or it reported none). */
  usage: Usage | null;
  /** Milliseconds from arrival to the end: the last byte, the error or the disconnect. */
  ms: number;
}

/** Work done once a request has settled. A hook that returns a promise holds the hooks after
 * it until the promise settles. */
export type SettleHook = (ctx: RequestContext, settlement: Settlement) => void | Promise<void>;

/** Client-closed status (nginx's convention). */
const CLIENT_CLOSED = 499;

/** Runs the app's settle hooks, in order; a hook that fails is reported on stderr and the hooks
 * after it still run. */
export class Settler implements SettleRunner {
  readonly #hooks: readonly SettleHook[];
  readonly #logger: Logger;

  constructor(hooks: readonly SettleHook[], logger: Logger) {
    this.#hooks = hooks;
    this.#logger = logger;
  }

  /** Settles `ctx` (called by {@link RequestContext.settle}, which makes it once). */
  run(ctx: RequestContext, status: number, error: string | null): void {
    const ms = Math.round((performance.now() - ctx.started) * 100) / 100;
    this.#from(0, ctx, { status, error, usage: ctx.usage, ms });
  }

  #from(first: number, ctx: RequestContext, settlement: Settlement): void {
    const hooks = this.#hooks;
    for (let i = first; i < hooks.length; i++) {
      let pending: void | Promise<void>;
      try {
        pending = hooks[i]!(ctx, settlement);
      } catch (e) {
        this.#failed(e, ctx);
        continue;
      }
      if (pending) {
        pending.then(
          () => this.#from(i + 1, ctx, settlement),
          (e) => {
            this.#failed(e, ctx);
            this.#from(i + 1, ctx, settlement);
          },
        );
        return;
      }
    }
  }

  #failed(e: unknown, ctx: RequestContext): void {
    this.#logger.error("a settle hook failed", e, ctx.requestId);
  }
}

/**
 * The step: settles the request once the steps after it have answered, unless the response's
 * body settles it when it ends (a stream that began). A request whose client has left is
 * settled as 499 `client_disconnected`.
 */
export async function settle(ctx: RequestContext, next: Next<RequestContext>): Promise<Response> {
  const response = await next(ctx);
  if (!ctx.settlesLater || ctx.error !== null) {
    if (ctx.signal.aborted) ctx.settle(CLIENT_CLOSED, "client_disconnected");
    else ctx.settle(response.status, ctx.error);
  }
  return response;
}
