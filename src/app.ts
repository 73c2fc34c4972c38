import { createChatCompletion } from "./api/chat_completions/handler.ts";
import { countMessageTokens, createMessage } from "./api/messages/handler.ts";
import { callModelMethod } from "./api/gemini/handler.ts";
import { getGeminiModel, listGeminiModels } from "./api/gemini/models.ts";
import { AdminToken, TokenAttempts } from "./auth/admin_token.ts";
import { KeyStore } from "./auth/keys.ts";
import { responseCache } from "./cache/step.ts";
import { ModelDiscovery } from "./catalogue/discovery.ts";
import { Catalogue } from "./catalogue/store.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Config } from "./config/types.ts";
import { clientIp } from "./http/client_ip.ts";
import { Cors } from "./http/cors.ts";
import { Expiries } from "./http/expiries.ts";
import type { HttpClient } from "./http/client/types.ts";
import { fetchReason, upstreamClient } from "./http/client/upstream_client.ts";
import { KvHealth } from "./kv/health.ts";
import { guardrails } from "./guardrails/step.ts";
import { GroupCommit } from "./limits/group_commit.ts";
import { spendLedger } from "./limits/spend.ts";
import { tokenLedger } from "./limits/tokens.ts";
import { ConcurrencyLeases } from "./limits/leases.ts";
import { RateLimiter } from "./limits/limiter.ts";
import { KvLogSink } from "./log/kv_sink.ts";
import { Logger, type LogOutput } from "./log/logger.ts";
import { admit } from "./pipeline/admit.ts";
import { auth } from "./pipeline/auth.ts";
import { body } from "./pipeline/body.ts";
import { compose } from "./pipeline/compose.ts";
import { concurrency, releaseSlot } from "./pipeline/concurrency.ts";
import { RequestContext, type Services } from "./pipeline/context.ts";
import { cors } from "./pipeline/cors.ts";
import { logRecord } from "./pipeline/log.ts";
import { reserve, settleReservations } from "./pipeline/reserve.ts";
import { respond } from "./pipeline/respond.ts";
import { dispatch, type Resource } from "./pipeline/dispatch.ts";
import { settle, Settler } from "./pipeline/settle.ts";
import { StoreGuard } from "./pipeline/store_guard.ts";
import { createProviders } from "./providers/registry.ts";
import type { Provider } from "./providers/types.ts";
import { createKey, getKey, listKeys, revokeKey, updateKey } from "./api/admin/keys.ts";
import { listLogs } from "./api/admin/logs.ts";
import {
  deleteAdminModel,
  getAdminModel,
  listAdminModels,
  patchAdminModel,
  putAdminModel,
} from "./api/admin/models.ts";
import { getUsage } from "./api/admin/usage.ts";
import { listRoutes } from "./api/admin/routes.ts";
import { withoutQuery } from "./api/admin/input.ts";
import { RouteHealth } from "./routing/health.ts";
import { AppMetrics } from "./metrics/setup.ts";
import { traceRequest } from "./pipeline/trace.ts";
import type { OtelApi } from "./telemetry/otel.ts";
import { tracedProvider } from "./telemetry/traced_provider.ts";
import { Tracing } from "./telemetry/tracing.ts";
import { health } from "./api/health/handler.ts";
import { createEmbeddings } from "./api/embeddings/handler.ts";
import { createRerank } from "./api/rerank/handler.ts";
import { generateImages } from "./api/images/handler.ts";
import { listModels, retrieveModel } from "./api/models/handler.ts";
import { createModeration } from "./api/moderations/handler.ts";
import {
  createResponse,
  deleteResponse,
  getResponse,
  listInputItems,
} from "./api/responses/handler.ts";
import {
  createFile,
  deleteFile,
  fileContent,
  listFiles,
  retrieveFile,
} from "./api/files/handler.ts";
import { cancelBatch, createBatch, listBatches, retrieveBatch } from "./api/batches/handler.ts";
import { listAdminBatches } from "./api/admin/batches.ts";
import { BatchRunner } from "./batches/runner.ts";
import { QueueDispatcher } from "./batches/queue.ts";
import { isLocalKvFile, openKv } from "./kv/open.ts";
import type { OnBehalf } from "./pipeline/context.ts";
import { IdleTrimmer } from "./serve/memory_trim.ts";
import { adminPage, asset, homePage, playgroundPage } from "./api/pages/handler.ts";

/** A model's Gemini methods (`{model}:generateContent`...): chat calls with a JSON body. */
const CHAT_JSON = { scope: "chat", json: true } as const;

/** The public API's route table. */
const RESOURCES: readonly Resource[] = [
  { path: "/v1/models", methods: { GET: listModels }, scope: "other", errors: "versioned" },
  {
    path: "/v1/models/:id",
    methods: { GET: retrieveModel, POST: callModelMethod },
    scope: "other",
    errors: "versioned",
    overrides: { POST: { ...CHAT_JSON, errors: "gemini" } },
  },
  { path: "/v1beta/models", methods: { GET: listGeminiModels }, scope: "other", errors: "gemini" },
  {
    path: "/v1beta/models/:id",
    methods: { GET: getGeminiModel, POST: callModelMethod },
    scope: "other",
    errors: "gemini",
    overrides: { POST: CHAT_JSON },
  },
  {
    path: "/v1/chat/completions",
    methods: { POST: createChatCompletion },
    scope: "chat",
    json: true,
  },
  { path: "/v1/responses", methods: { POST: createResponse }, scope: "chat", json: true },
  {
    path: "/v1/responses/:id",
    methods: { GET: getResponse, DELETE: deleteResponse },
    scope: "other",
  },
  { path: "/v1/responses/:id/input_items", methods: { GET: listInputItems }, scope: "other" },
  {
    path: "/v1/messages",
    methods: { POST: createMessage },
    scope: "chat",
    json: true,
    errors: "anthropic",
  },
  {
    path: "/v1/messages/count_tokens",
    methods: { POST: countMessageTokens },
    scope: "chat",
    json: true,
    errors: "anthropic",
  },
  { path: "/v1/moderations", methods: { POST: createModeration }, scope: "other", json: true },
  {
    path: "/v1/embeddings",
    methods: { POST: createEmbeddings },
    scope: "other",
    json: true,
    metered: true,
  },
  {
    path: "/v1/rerank",
    methods: { POST: createRerank },
    scope: "other",
    json: true,
    metered: true,
  },
  {
    path: "/v1/images/generations",
    methods: { POST: generateImages },
    scope: "images",
    json: true,
  },
  // Files and batches (docs/batches.md): the multipart upload is read by its handler.
  { path: "/v1/files", methods: { GET: listFiles, POST: createFile }, scope: "other" },
  {
    path: "/v1/files/:id",
    methods: { GET: retrieveFile, DELETE: deleteFile },
    scope: "other",
  },
  { path: "/v1/files/:id/content", methods: { GET: fileContent }, scope: "other" },
  {
    path: "/v1/batches",
    methods: { GET: listBatches, POST: createBatch },
    scope: "other",
    overrides: { POST: { scope: "other", json: true } },
  },
  { path: "/v1/batches/:id", methods: { GET: retrieveBatch }, scope: "other" },
  { path: "/v1/batches/:id/cancel", methods: { POST: cancelBatch }, scope: "other" },
  { path: "/healthz", methods: { GET: health }, scope: null },
  // The web pages (README "Web pages"): not limited, like /healthz; they serve from memory.
  { path: "/", methods: { GET: homePage }, scope: null },
  { path: "/playground", methods: { GET: playgroundPage }, scope: null },
  { path: "/admin", methods: { GET: adminPage }, scope: null },
  { path: "/assets/:name", methods: { GET: asset }, scope: null },
];

/** The admin API (DESIGN §5), served only when `SWITCHYARD_ADMIN_TOKEN` is set. Only logs and
 * usage take query parameters; the other routes refuse any. */
const ADMIN_RESOURCES: readonly Resource[] = [
  ...[
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
      methods: {
        GET: getAdminModel,
        PUT: putAdminModel,
        PATCH: patchAdminModel,
        DELETE: deleteAdminModel,
      },
      scope: null,
      admin: true,
    },
    { path: "/admin/routes", methods: { GET: listRoutes }, scope: null, admin: true },
  ].map(withoutQuery),
  { path: "/admin/logs", methods: { GET: listLogs }, scope: null, admin: true },
  { path: "/admin/usage", methods: { GET: getUsage }, scope: null, admin: true },
  { path: "/admin/batches", methods: { GET: listAdminBatches }, scope: null, admin: true },
];

/** What an app is built from; everything but config and kv has a production default. */
export interface AppDeps {
  config: Config;
  kv: Deno.Kv;
  clock?: Clock;
  /** Environment lookup (provider keys, admin token). */
  env?: (name: string) => string | undefined;
  /** The HTTP client for upstream calls (default: Switchyard's own, or fetch behind a proxy);
   * a provider with `ca_certs_env` gets one of its own, built the same way. */
  http?: HttpClient;
  /** Where log lines go (default: the process's stdout and stderr). */
  output?: LogOutput;
  /** Provider adapters to use instead of the configured ones, by provider id. */
  providers?: ReadonlyMap<string, Provider>;
  /** How often the catalogue polls KV for changes from other processes. */
  cataloguePollMs?: number;
  /** Milliseconds between batched log writes to KV. */
  logFlushMs?: number;
  /** Numbers in [0, 1), for route choice (default `Math.random`). */
  random?: () => number;
  /** OpenTelemetry as Deno offers it (default `Deno.telemetry`; used when `OTEL_DENO` is on). */
  telemetry?: OtelApi;
  /** `false`: leave seeding the catalogue to the caller (main.ts seeds once it listens). */
  seed?: boolean;
  /** Returns freed memory to the system, called once the process has gone quiet after a busy
   * spell (main.ts passes glibc's `malloc_trim` when FFI to libc is granted). */
  trimMemory?: () => void;
  /** Milliseconds of no request before memory kept for speed is let go (default 5 s). */
  trimIntervalMs?: number;
}

/** A built app: the request handler and the services behind it. */
export interface App {
  handler(request: Request, info: Deno.ServeHandlerInfo): Promise<Response>;
  services: Services;
  /** Lets background work stop whenever idle (the image workers; batch lines go back to the
   * queue), for a draining process. */
  release(): void;
  /** Settles the requests still open (as stopped by the shutdown), stops background work and
   * writes pending log records; the process may exit once it resolves. */
  close(): Promise<void>;
}

/** The address of internal requests (batch lines). */
const INTERNAL_ADDR: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 0 };

/** How often the process looks whether it has gone quiet, to trim memory: a burst's freed
 * memory goes back to the system 5-10 s after its last request. */
const TRIM_INTERVAL_MS = 5_000;

/** Builds the app: seeds the catalogue into KV and wires every service. */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, kv } = deps;
  const clock = deps.clock ?? systemClock;
  const env = deps.env ?? ((name: string) => Deno.env.get(name));
  // Why upstream calls go through fetch, if they do (a bad SWITCHYARD_HTTP_CLIENT fails here,
  // before anything starts).
  const viaFetch = deps.http === undefined ? fetchReason(env) : null;
  const adminTokenValue = env("SWITCHYARD_ADMIN_TOKEN");
  // One count of wrong tokens per IP for the admin API and /metrics.
  const attempts = new TokenAttempts({ kv, clock });
  const adminToken = adminTokenValue ? new AdminToken(adminTokenValue, attempts) : null;
  const loggerOptions: ConstructorParameters<typeof Logger>[0] = { clock };
  if (deps.output) loggerOptions.output = deps.output;
  const logger = new Logger(loggerOptions);
  const metrics = AppMetrics.configured(config, env, {
    open: () => settler.open(),
    recordsNotStored: () => logger.recordsNotStored,
    memory: () => Deno.memoryUsage(),
    batchQueueDepth: () => services.batches.queueDepth(),
  }, attempts);
  logger.addSink(
    new KvLogSink({
      kv,
      retentionDays: config.logs.retention_days,
      usageRetentionDays: config.logs.usage_retention_days,
      intervalMs: deps.logFlushMs ?? 250,
      maxRecordsPerMinute: config.logs.max_records_per_minute,
      clock,
      onError: (e) => logger.error("could not write log records to KV", e),
      onWarning: (message) => logger.warn(message),
      ...(metrics ? { onCommit: metrics.commitObserver("log") } : {}),
    }),
  );
  const providerOptions: Parameters<typeof createProviders>[1] = {
    env,
    http: deps.http ?? upstreamClient(env),
    clock,
    logger,
  };
  if (deps.providers) providerOptions.overrides = deps.providers;
  const tracing = Tracing.configured(env, deps.telemetry, config.logs.include_content);
  if (tracing) providerOptions.decorate = (p, c) => tracedProvider(p, c, tracing);
  const providers = createProviders(config, providerOptions);
  const catalogue = await Catalogue.open({
    kv,
    clock,
    ...(deps.cataloguePollMs !== undefined ? { pollMs: deps.cataloguePollMs } : {}),
  });
  if (deps.seed !== false) await catalogue.seed(config.models);

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
  const services: Services = {
    config,
    kv,
    kvHealth,
    clock,
    logger,
    catalogue,
    providers,
    keys,
    routes: new RouteHealth({ clock }),
    random: deps.random ?? Math.random,
    bodyTimers: new Expiries(Expiries.tickFor(config.server.body_timeout_ms)),
    // The steps around chat calls' models (pipeline/model_step.ts), outermost first.
    modelSteps: [
      guardrails({ http: providerOptions.http, env }),
      responseCache({ kv, clock, logger }),
    ],
    batches: new BatchRunner({
      kv,
      clock,
      config: config.batches,
      limits: config.limits,
      keys,
      logger,
      run: runInternal,
      openRequests: () => settler.open().requests,
      liveAt: () => settler.liveAt,
      ...(metrics ? { onLine: (ok: boolean) => metrics.batchLine(ok) } : {}),
    }),
  };
  // The app's one KV queue listener, shared by every kind of background message. On a local
  // file it listens on a handle of its own: a listener ends only with its handle, and a draining
  // `deno serve` worker must end it (release) while its last requests still use `kv`.
  const ownQueueKv = isLocalKvFile(config.kv.path);
  const queue = new QueueDispatcher(
    ownQueueKv ? await openKv(config.kv.path) : kv,
    (message, e) => logger.error(message, e),
    ownQueueKv,
  );
  services.batches.listenOn(queue);
  let stopping: Promise<void> | null = null;
  /** Stops batch work: no new message, waiting lines back to the queue, the listener ended. */
  const stopQueue = () => {
    if (stopping !== null) return stopping;
    const draining = queue.close();
    services.batches.close();
    return stopping = draining;
  };
  // One group commit for the request and token counters: their writes share KV commits.
  const commits = new GroupCommit(kv, metrics?.commitObserver("ratelimit"));
  const limiter = new RateLimiter({
    kv: kv,
    clock,
    limits: config.limits,
    keys,
    ipv6Prefix: config.server.ipv6_prefix,
    commits,
  });
  const ledgers = {
    tokens: tokenLedger({ kv: kv, clock, commits }),
    spend: spendLedger({ kv: kv, clock, commits }),
  };
  const leases = new ConcurrencyLeases({ kv: kv, clock, commits });
  if (adminToken) logger.info("admin API enabled under /admin/");
  if (viaFetch !== null) logger.info(`${viaFetch}: upstream calls go through fetch`);
  if (metrics) logger.info("metrics served at /metrics");
  const store = new StoreGuard(kvHealth, logger);
  const resources = adminToken ? [...RESOURCES, ...ADMIN_RESOURCES] : [...RESOURCES];
  if (metrics) resources.push(metrics.resource());
  // What runs once each request has settled, in order.
  const settler: Settler = new Settler([
    logRecord(logger, config.logs.include_content, (model) => catalogue.get(model)?.pricing),
    settleReservations(ledgers, logger),
    releaseSlot(leases, logger),
    ...(metrics ? [metrics.hook()] : []),
  ], logger);
  const trimmer = new IdleTrimmer({
    // The upstream client's kept buffers (up to 32 MB after a burst), and with FFI glibc's
    // free memory, once a whole interval passed without a request.
    trim: () => {
      providerOptions.http.trim?.();
      deps.trimMemory?.();
    },
    activity: () => settler.activity,
    intervalMs: deps.trimIntervalMs ?? TRIM_INTERVAL_MS,
  });
  const policy = new Cors(config.server.cors_origins);
  // The request pipeline (DESIGN §3), outermost step first: a new cross-cutting step is one
  // module and one line here; the endpoint's handler answers last.
  const run = compose<RequestContext>([
    cors(policy),
    settle(settler),
    respond(logger),
    dispatch(resources, policy),
    ...(tracing ? [traceRequest(tracing)] : []),
    auth(adminToken, keys, store),
    admit(limiter, store, clock),
    concurrency(leases, store),
    body(config.server, services.bodyTimers),
    reserve(ledgers, store),
  ], (ctx) => ctx.endpoint.handler(ctx));

  function handler(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    const ip = clientIp(request, info.remoteAddr, config.server.trust_proxy);
    const ctx = new RequestContext(request, info.remoteAddr, ip, clock.now(), services, settler);
    // The outermost step is async: this is its promise, not a new one.
    if (tracing) {
      return tracing.serve(request, () => Promise.resolve(run(ctx)), () => ctx);
    }
    return Promise.resolve(run(ctx));
  }

  /** The internal entry point: runs a batch line through the pipeline as its batch's owner
   * (`onBehalf`), which no request from outside can set. */
  function runInternal(
    request: Request,
    onBehalf: OnBehalf,
  ): Promise<{ response: Response; requestId: string }> {
    const ctx = new RequestContext(
      request,
      INTERNAL_ADDR,
      INTERNAL_ADDR.hostname,
      clock.now(),
      services,
      settler,
    );
    ctx.onBehalf = onBehalf;
    return Promise.resolve(run(ctx)).then((response) => ({ response, requestId: ctx.requestId }));
  }

  // Lists the upstreams of `discover: true` providers from the next task on, so
  // that the first listing never delays the listener (main.ts binds before it runs).
  const discovery = new ModelDiscovery({
    config: config.providers,
    providers,
    catalogue,
    clock,
    logger,
  });
  discovery.start();
  queue.listen();

  return {
    handler,
    services,
    release: () => {
      providers.release();
      stopQueue().catch((e) => logger.error("could not stop the batch queue", e));
    },
    async close() {
      // Batch lines still running are settled with the rest; no new message is taken.
      const draining = stopQueue();
      await settler.close();
      await draining;
      // The last requests' slots and reservations are given back before the process stops:
      // otherwise a key stays at its concurrency limit until the leases expire, and its
      // budget keeps the worst case of each stream the shutdown cut.
      await Promise.all([ledgers.tokens.idle(), ledgers.spend.idle(), leases.idle()]);
      trimmer.close();
      kvHealth.close();
      leases.close();
      discovery.close();
      catalogue.close();
      providers.close();
      await logger.flush();
      await tracing?.beforeExit();
    },
  };
}
