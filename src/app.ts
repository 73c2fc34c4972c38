import { AdminToken } from "./auth/admin_token.ts";
import { ANONYMOUS_CALLER, authenticate, type Caller } from "./auth/authenticate.ts";
import { KeyStore } from "./auth/keys.ts";
import { ANONYMOUS, type Principal } from "./auth/principal.ts";
import { Catalogue } from "./catalogue/store.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Config, LimitScope } from "./config.ts";
import type { Handler, LogFields, RequestContext, Services } from "./context.ts";
import {
  ApiError,
  internalError,
  methodNotAllowed,
  routeNotFound,
  serviceUnavailable,
} from "./errors.ts";
import { clientIp } from "./http/client_ip.ts";
import { Cors } from "./http/cors.ts";
import { DisconnectWatch } from "./http/disconnect_watch.ts";
import { errorResponse } from "./http/response.ts";
import { Router } from "./http/router.ts";
import { KvHealth } from "./kv/health.ts";
import { RateLimiter } from "./limits/limiter.ts";
import { setRateLimitHeaders, type WindowState } from "./limits/windows.ts";
import { KvLogSink } from "./log/kv_sink.ts";
import { Logger, type LogOutput } from "./log/logger.ts";
import type { LogRecord } from "./log/record.ts";
import { createProviders } from "./providers/registry.ts";
import type { Provider } from "./providers/types.ts";
import { createKey, getKey, listKeys, revokeKey, updateKey } from "./routes/admin/keys.ts";
import { listLogs } from "./routes/admin/logs.ts";
import {
  deleteAdminModel,
  getAdminModel,
  listAdminModels,
  putAdminModel,
} from "./routes/admin/models.ts";
import { getUsage } from "./routes/admin/usage.ts";
import { createChatCompletion } from "./routes/chat_completions.ts";
import { health } from "./routes/health.ts";
import { generateImages } from "./routes/images.ts";
import { listModels } from "./routes/models.ts";
import { createModeration } from "./routes/moderations.ts";

/** A route of the app: its handlers and the rate-limit scope it counts against. */
export interface Route {
  path: string;
  methods: Partial<Record<string, Handler>>;
  /** Rate-limit scope, or `null` for routes that are not limited (health, admin). */
  scope: LimitScope | null;
  /** Admin routes need the admin token instead of an API key. */
  admin?: boolean;
}

/** The public API's route table. */
export const ROUTES: readonly Route[] = [
  { path: "/v1/models", methods: { GET: listModels }, scope: "other" },
  { path: "/v1/chat/completions", methods: { POST: createChatCompletion }, scope: "chat" },
  { path: "/v1/moderations", methods: { POST: createModeration }, scope: "other" },
  { path: "/v1/images/generations", methods: { POST: generateImages }, scope: "images" },
  { path: "/healthz", methods: { GET: health }, scope: null },
];

/** The admin API (DESIGN §5), served only when `SWITCHYARD_ADMIN_TOKEN` is set. */
export const ADMIN_ROUTES: readonly Route[] = [
  { path: "/admin/keys", methods: { GET: listKeys, POST: createKey }, scope: null, admin: true },
  {
    path: "/admin/keys/:id",
    methods: { GET: getKey, PATCH: updateKey, DELETE: revokeKey },
    scope: null,
    admin: true,
  },
  { path: "/admin/models", methods: { GET: listAdminModels }, scope: null, admin: true },
  {
    path: "/admin/models/:id",
    methods: { GET: getAdminModel, PUT: putAdminModel, DELETE: deleteAdminModel },
    scope: null,
    admin: true,
  },
  { path: "/admin/logs", methods: { GET: listLogs }, scope: null, admin: true },
  { path: "/admin/usage", methods: { GET: getUsage }, scope: null, admin: true },
];

/** The rate-limit window a request was admitted in (for its response headers), and when. */
interface Admitted {
  window: WindowState | null;
  at: number;
}

/** One request on its way through the app: its context for the handlers, and its log record
 * (written once, when the response is sent or, for a stream, when the body ends). */
class Exchange implements RequestContext {
  readonly url: URL;
  readonly requestId = "req_" + crypto.randomUUID().replaceAll("-", "");
  /** The request's signal, or for a request with a body one that also fires when the
   * disconnect watch sees the client leave (see `http/disconnect_watch.ts`). */
  signal: AbortSignal;
  params: Readonly<Record<string, string>> = {};
  principal: Principal = ANONYMOUS;
  readonly log: LogFields = {
    model: null,
    provider: null,
    prompt_tokens: null,
    completion_tokens: null,
    stream: false,
  };
  readonly limit: Admitted = { window: null, at: 0 };
  /** Whether a handler took over writing the log record (a stream). */
  deferred = false;
  readonly #started = performance.now();
  #headers: Headers | undefined;

  constructor(
    readonly request: Request,
    readonly ip: string,
    readonly services: Services,
    readonly arrived: number,
  ) {
    this.url = new URL(request.url);
    this.signal = request.signal;
  }

  get responseHeaders(): Headers {
    return this.#headers ??= new Headers();
  }

  /** Copies the headers handlers added onto the response's. */
  copyHeaders(headers: Headers): void {
    if (this.#headers) { for (const [name, value] of this.#headers) headers.set(name, value); }
  }

  deferLog(): (outcome: { status: number; error: string | null }) => void {
    this.deferred = true;
    let done = false;
    return ({ status, error }) => {
      if (done) return;
      done = true;
      this.writeLog(status, error);
    };
  }

  writeLog(status: number, error: string | null): void {
    const { log, principal } = this;
    const record: LogRecord = {
      ts: this.services.logger.timestamp(this.arrived),
      request_id: this.requestId,
      method: this.request.method,
      path: this.url.pathname,
      status,
      ms: Math.round((performance.now() - this.#started) * 100) / 100,
      ip: this.ip,
      key_id: principal.kind === "key" ? principal.key.id : null,
      model: log.model,
      provider: log.provider,
      prompt_tokens: log.prompt_tokens,
      completion_tokens: log.completion_tokens,
      error,
    };
    if (log.stream) record.stream = true;
    const { config, logger } = this.services;
    if (config.logs.include_content && log.content !== undefined) record.content = log.content;
    logger.request(record);
  }
}

/** What an app is built from; everything but config and kv has a production default. */
export interface AppDeps {
  config: Config;
  kv: Deno.Kv;
  clock?: Clock;
  /** Environment lookup (provider keys, admin token). */
  env?: (name: string) => string | undefined;
  /** The fetch used for upstream calls. */
  fetch?: typeof fetch;
  /** Where log lines go (default: the process's stdout and stderr). */
  output?: LogOutput;
  /** Provider adapters to use instead of the configured ones, by provider id. */
  providers?: ReadonlyMap<string, Provider>;
  /** How often the catalogue polls KV for changes from other processes. */
  cataloguePollMs?: number;
  /** Milliseconds between batched log writes to KV. */
  logFlushMs?: number;
}

/** A built app: the request handler and the services behind it. */
export interface App {
  handler(request: Request, info: Deno.ServeHandlerInfo): Promise<Response>;
  services: Services;
  /** Stops background work and writes pending log records. */
  close(): Promise<void>;
}

/** Builds the app: seeds the catalogue into KV and wires every service. */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, kv } = deps;
  const clock = deps.clock ?? systemClock;
  const env = deps.env ?? ((name: string) => Deno.env.get(name));
  const loggerOptions: ConstructorParameters<typeof Logger>[0] = { clock };
  if (deps.output) loggerOptions.output = deps.output;
  const logger = new Logger(loggerOptions);
  logger.addSink(
    new KvLogSink({
      kv,
      retentionDays: config.logs.retention_days,
      intervalMs: deps.logFlushMs ?? 250,
      maxRecordsPerMinute: config.logs.max_records_per_minute,
      clock,
      onError: (e) => logger.error("could not write log records to KV", e),
      onWarning: (message) => logger.warn(message),
    }),
  );
  const providerOptions: Parameters<typeof createProviders>[1] = {
    env,
    fetch: deps.fetch ?? fetch,
    clock,
    logger,
  };
  if (deps.providers) providerOptions.overrides = deps.providers;
  const providers = createProviders(config, providerOptions);
  const catalogue = await Catalogue.open({
    kv,
    clock,
    ...(deps.cataloguePollMs !== undefined ? { pollMs: deps.cataloguePollMs } : {}),
  });
  await catalogue.seed(config.models);

  const keys = new KeyStore(kv, clock, {
    onError: (e) => logger.error("could not record a key's last use", e),
  });
  const kvHealth = new KvHealth({
    kv,
    clock,
    path: config.kv.path,
    onUnhealthy: (reason) => logger.warn(`KV is unhealthy: ${reason} (kv.path ${config.kv.path})`),
  });
  await kvHealth.start();
  const disconnects = new DisconnectWatch({
    onUnavailable: (e) =>
      logger.warn(
        `cannot read the TCP table, so clients that leave after sending a body are noticed only when the response is written: ${
          e instanceof Error ? e.message : String(e)
        }`,
      ),
  });
  const services: Services = {
    config,
    kv,
    kvHealth,
    clock,
    logger,
    catalogue,
    providers,
    keys,
  };
  const limiter = new RateLimiter({ kv, clock, limits: config.limits, keys });
  const adminTokenValue = env("SWITCHYARD_ADMIN_TOKEN");
  const adminToken = adminTokenValue ? new AdminToken(adminTokenValue) : null;
  if (adminToken) logger.info("admin API enabled under /admin/");
  const router = new Router<Handler, Route>(adminToken ? [...ROUTES, ...ADMIN_ROUTES] : ROUTES);
  const cors = new Cors(config.server.cors_origins);

  async function handler(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    const ctx = new Exchange(
      request,
      clientIp(request, info.remoteAddr, config.server.trust_proxy),
      services,
      clock.now(),
    );
    const { requestId, url } = ctx;
    let unwatch: (() => void) | undefined;
    // (Not `request.body !== null`: making the body's stream costs more than a method check.)
    if (request.method !== "GET" && request.method !== "HEAD") {
      // One controller fed by both sources: `AbortSignal.any` cost ~10 µs a request.
      const left = new AbortController();
      const abort = () => left.abort();
      if (request.signal.aborted) abort();
      else request.signal.addEventListener("abort", abort, { once: true });
      ctx.signal = left.signal;
      unwatch = disconnects.watch(info.remoteAddr, abort);
    }
    let response: Response;
    let errorCode: string | null = null;
    try {
      response = await route(ctx, ctx.limit);
    } catch (e) {
      let error: ApiError;
      if (e instanceof ApiError) {
        error = e;
      } else {
        logger.error(`unhandled error in ${request.method} ${url.pathname}`, e, requestId);
        error = internalError(requestId);
      }
      errorCode = error.code ?? error.type;
      response = errorResponse(error);
    } finally {
      unwatch?.();
    }
    const headers = response.headers;
    headers.set("x-request-id", requestId);
    const { window, at } = ctx.limit;
    if (window) setRateLimitHeaders(headers, window, at);
    ctx.copyHeaders(headers);
    cors.decorate(request, headers);
    if (!ctx.deferred) {
      const status = ctx.signal.aborted ? 499 : response.status;
      ctx.writeLog(status, status === 499 ? "client_disconnected" : errorCode);
    }
    return response;
  }

  /** Runs the matched route; `limit` gets the rate-limit window the request was admitted in.
   * Requests that reach no handler (preflights, unknown paths, wrong methods, failed admin
   * auth) count against the caller's IP in the `other` scope: they are logged too. */
  async function route(ctx: RequestContext, limit: Admitted): Promise<Response> {
    const { request, url } = ctx;
    const anonymous = () => admit(ctx, limit, "other", () => ANONYMOUS_CALLER);
    if (cors.isPreflight(request)) {
      await anonymous();
      return cors.preflight(request);
    }
    const match = router.match(url.pathname);
    if (!match) {
      await anonymous();
      throw routeNotFound(request.method, url.pathname);
    }
    if (match.route.admin) {
      try {
        adminToken!.authorize(request);
      } catch (e) {
        await anonymous();
        throw e;
      }
    }
    const methods = match.route.methods;
    const handler = methods[request.method] ??
      (request.method === "HEAD" ? methods.GET : undefined);
    if (!handler) {
      if (match.route.scope !== null || match.route.admin) await anonymous();
      const allow = Object.keys(methods);
      if (request.method === "OPTIONS") {
        return new Response(null, {
          status: 204,
          headers: { allow: [...allow, "OPTIONS"].join(", ") },
        });
      }
      throw methodNotAllowed(request.method, url.pathname, [...allow, "OPTIONS"]);
    }
    (ctx as { params: Record<string, string> }).params = match.params;
    if (match.route.scope !== null) {
      // Auth, then the rate limit, before anything reads the body: a refused request costs
      // no parsing and never reaches a provider.
      await admit(ctx, limit, match.route.scope, () => authenticate(request, keys));
    }
    return await handler(ctx);
  }

  /** Authenticates and admits a request against `scope`'s limits. A store that fails (or
   * failed lately, or was replaced) makes the limits undecidable: 503, never a 500. */
  async function admit(
    ctx: RequestContext,
    limit: Admitted,
    scope: LimitScope,
    caller: () => Caller | Promise<Caller>,
  ): Promise<void> {
    const { healthy, reason } = kvHealth.status;
    if (!healthy) throw serviceUnavailable(`The gateway's data store is unavailable (${reason}).`);
    try {
      const admission = await limiter.admit(scope, await caller(), ctx.ip);
      ctx.principal = admission.principal;
      limit.window = admission.window;
      limit.at = clock.now();
    } catch (e) {
      if (e instanceof ApiError) throw e;
      kvHealth.failed(e);
      logger.error("KV failed while admitting a request", e, ctx.requestId);
      throw serviceUnavailable("The gateway's data store is unavailable; try again later.");
    }
  }

  return {
    handler,
    services,
    async close() {
      kvHealth.close();
      disconnects.close();
      catalogue.close();
      providers.close();
      await logger.flush();
    },
  };
}
