import type { KeyStore } from "./auth/keys.ts";
import type { Principal } from "./auth/principal.ts";
import type { Catalogue } from "./catalogue/store.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { KvHealth } from "./kv/health.ts";
import type { Logger } from "./log/logger.ts";
import type { Providers } from "./providers/registry.ts";

/** Everything a route handler may use, built once per app. */
export interface Services {
  config: Config;
  kv: Deno.Kv;
  /** Whether KV works and is still the store this process opened. */
  kvHealth: KvHealth;
  clock: Clock;
  logger: Logger;
  catalogue: Catalogue;
  providers: Providers;
  keys: KeyStore;
}

/** Fields of the log record that handlers fill in as they learn them. */
export interface LogFields {
  model: string | null;
  provider: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  stream: boolean;
  content?: unknown;
}

/** One request on its way through the app. */
export interface RequestContext {
  readonly request: Request;
  readonly url: URL;
  readonly requestId: string;
  readonly ip: string;
  /** Path parameters of the matched route (`/admin/keys/:id` → `id`). */
  readonly params: Readonly<Record<string, string>>;
  /** Fires when the client goes away (also after a request body, which Deno's own signal
   * misses: see `http/disconnect_watch.ts`). */
  readonly signal: AbortSignal;
  readonly services: Services;
  principal: Principal;
  readonly log: LogFields;
  /** Headers added to the response, whatever it is (rate-limit headers). */
  readonly responseHeaders: Headers;
  /**
   * Keeps the request's log record open past the handler's return (for streams). Call the
   * returned function once, when the body has been delivered or abandoned.
   */
  deferLog(): (outcome: { status: number; error: string | null }) => void;
}

/** A route handler. */
export type Handler = (ctx: RequestContext) => Response | Promise<Response>;
