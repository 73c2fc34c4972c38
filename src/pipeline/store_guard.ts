/**
 * KV as the steps that decide on it see it (auth's key lookup, admit's counters): a store that
 * fails, failed lately or was replaced makes their decision impossible, which is a 503 and never
 * a 500.
 */
import { ApiError, serviceUnavailable } from "../errors.ts";
import type { KvHealth } from "../kv/health.ts";
import type { Logger } from "../log/logger.ts";
import type { RequestContext } from "./context.ts";

/** Guards the steps that need KV to decide a request. */
export class StoreGuard {
  readonly #health: KvHealth;
  readonly #logger: Logger;

  constructor(health: KvHealth, logger: Logger) {
    this.#health = health;
    this.#logger = logger;
  }

  /** Throws 503 while the store is unhealthy. */
  check(): void {
    const { healthy, reason } = this.#health.status;
    if (!healthy) throw serviceUnavailable(`The gateway's data store is unavailable (${reason}).`);
  }

  /** What to throw for `e`, thrown while deciding `ctx`: an {@link ApiError} as it is; anything
   * else is the store failing, which marks it unhealthy and is a 503. */
  failure(e: unknown, ctx: RequestContext): ApiError {
    if (e instanceof ApiError) return e;
    this.#health.failed(e);
    this.#logger.error("KV failed while admitting a request", e, ctx.requestId);
    return serviceUnavailable("The gateway's data store is unavailable; try again later.");
  }
}
