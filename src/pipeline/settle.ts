/**
 * Settling a request (DESIGN §3): once, after its response was sent or its stream ended, also
 * on an error, a client that left, a stream cut short and the process shutting down, its settle
 * hooks run in order with how it ended and its final usage. The log record is written by one
 * hook, the metrics by another; the ledger's token and spend settlement plugs in as another.
 */
import type { Usage } from "../canonical/result.ts";
import { EntryList } from "../entry_list.ts";
import { EventStreamResponse } from "../http/sse_response.ts";
import type { Logger } from "../log/logger.ts";
import type { Step } from "./compose.ts";
import type { OpenRequest, RequestContext, SettleRunner } from "./context.ts";

/** How a request ended. */
export interface Settlement {
  status: number;
  /** The error code sent to the client (`client_disconnected` when it left), or `null`. */
  error: string | null;
  /** The call's final usage, or `null` when no model was called (or it reported none and
   * streamed nothing). */
  usage: Usage | null;
  /** Whether `usage.output` was estimated from the streamed text: the back end reported fewer
   * tokens (or none) before the stream ended early, or none at all. `usage.input` is then
   * what it reported, 0 when it reported nothing. */
  estimated: boolean;
  /** Milliseconds from arrival to the end: the last byte, the error or the disconnect. */
  ms: number;
  /** Milliseconds from arrival until the response was ready (a stream's first bytes), or
   * `null` when there was none. */
  firstByteMs: number | null;
  /** Whether a streamed answer began. */
  streamed: boolean;
  /** `shutdown` when the gateway settled the request because the process was stopping. */
  reason: "shutdown" | null;
}

/** Work done once a request has settled. A hook that returns a promise holds the hooks after
 * it until the promise settles. */
export type SettleHook = (ctx: RequestContext, settlement: Settlement) => void | Promise<void>;

/** Client-closed status (nginx's convention). */
const CLIENT_CLOSED = 499;
/** The status and error code of a request the process stopped before it ended. */
const SHUTDOWN_STATUS = 503;
const SHUTDOWN_ERROR = "server_shutdown";

/** Runs the app's settle hooks, in order; a hook that fails is reported on stderr and the hooks
 * after it still run. Knows the requests not yet settled, so that {@link close} settles them. */
export class Settler implements SettleRunner {
  readonly #hooks: readonly SettleHook[];
  readonly #logger: Logger;
  readonly #open = new EntryList<OpenRequest>();
  /** Hooks still running (a hook's promise, and the hooks after it). */
  readonly #running = new EntryList<Promise<void>>();
  /** Set while {@link close} settles the open requests. */
  #closing = false;
  /** Requests opened and settled since start: changes whenever one begins or ends. */
  activity = 0;
  /** `performance.now()` when a live request (not a batch line) last began or ended. */
  liveAt = 0;

  constructor(hooks: readonly SettleHook[], logger: Logger) {
    this.#hooks = hooks;
    this.#logger = logger;
  }

  /** Requests not yet settled, and how many of them are streams that began. */
  open(): { requests: number; streams: number } {
    let streams = 0;
    for (const open of this.#open.values()) if (open.tally !== null) streams++;
    return { requests: this.#open.size, streams };
  }

  /** Notes a request the settle step took (settled later by {@link run} or {@link close}). */
  opened(ctx: RequestContext): void {
    this.activity++;
    if (ctx.onBehalf === null) this.liveAt = performance.now();
    ctx.open = this.#open.add({ ctx, responded: null, tally: null });
  }

  /** Notes that the request's response is ready (a stream's first bytes, with its tally). */
  responded(ctx: RequestContext, response: Response): void {
    const open = ctx.open?.value;
    if (!open) return;
    open.responded = performance.now();
    if (response instanceof EventStreamResponse) open.tally = response.tally;
  }

  /** Settles `ctx` (called by {@link RequestContext.settle}, which makes it once). */
  run(ctx: RequestContext, status: number, error: string | null): void {
    const now = performance.now();
    const open = ctx.open?.value;
    if (ctx.open !== null) this.#open.delete(ctx.open);
    ctx.open = null;
    this.activity++;
    if (ctx.onBehalf === null) this.liveAt = now;
    const tally = open?.tally ?? null;
    // A stream's usage is the last one it reported, kept by its tally (not copied each batch).
    if (tally?.usage) ctx.usage = tally.usage;
    let usage = ctx.usage;
    let estimated = false;
    if (tally !== null && tally.chars > 0) {
      // A stream that ended early may have a count from its start only (Anthropic's
      // message_start), one without usage has none: then the streamed text is counted.
      const output = tally.estimatedOutput();
      if (usage === null || (status !== 200 && usage.output < output)) {
        usage = { ...(usage ?? { input: 0 }), output };
        estimated = true;
      }
    }
    const responded = open?.responded ?? null;
    this.#from(0, ctx, {
      status,
      error,
      usage,
      estimated,
      ms: round(now - ctx.started),
      firstByteMs: responded === null ? null : round(responded - ctx.started),
      streamed: tally !== null,
      reason: this.#closing ? "shutdown" : null,
    });
  }

  /**
   * Settles every request still open as stopped by the shutdown (503 `server_shutdown`, with
   * the tokens streamed so far) and waits for all settle hooks to finish. Called when the
   * process stops, after the grace period.
   */
  async close(): Promise<void> {
    this.#closing = true;
    for (const { ctx } of this.#open.values()) ctx.settle(SHUTDOWN_STATUS, SHUTDOWN_ERROR);
    this.#closing = false;
    while (this.#running.size > 0) await Promise.all(this.#running.values());
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
        const rest = pending.then(
          () => this.#from(i + 1, ctx, settlement),
          (e) => {
            this.#failed(e, ctx);
            this.#from(i + 1, ctx, settlement);
          },
        );
        const running = this.#running.add(rest);
        rest.then(() => this.#running.delete(running));
        return;
      }
    }
  }

  #failed(e: unknown, ctx: RequestContext): void {
    this.#logger.error("a settle hook failed", e, ctx.requestId);
  }
}

/** Milliseconds to two decimals. */
function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/**
 * The step: settles the request once the steps after it have answered, unless the response's
 * body settles it when it ends (a stream that began). A request whose client has left is
 * settled as 499 `client_disconnected`.
 */
export function settle(settler: Settler): Step<RequestContext> {
  return async (ctx, next) => {
    settler.opened(ctx);
    let response: Response;
    try {
      response = await next(ctx);
    } catch (e) {
      // The respond step answers every error; this is a bug, but still settled once.
      ctx.settle(500, "internal_error");
      throw e;
    }
    settler.responded(ctx, response);
    if (!ctx.settlesLater || ctx.error !== null) {
      // (A request refused after its work began was stopped by the refusal, not the client.)
      if (ctx.signal.aborted && ctx.refused === null) {
        ctx.settle(CLIENT_CLOSED, "client_disconnected");
      } else ctx.settle(response.status, ctx.error);
    }
    return response;
  };
}
