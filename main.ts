/**
 * Switchyard's entry point: flags and env -> config -> KV -> `serveHttp(createApp(...))`.
 *
 * `deno task start` (and the compiled binary) runs it as one process; `deno serve --parallel
 * main.ts` runs the default export on every core (the workers share the KV file). Either way
 * the config is read and checked before the first request, the catalogue is seeded only once
 * the listener is bound (an instance that cannot listen writes nothing), and SIGTERM/SIGINT
 * drain open requests for up to `server.shutdown_grace_seconds`.
 */
import { type App, createApp } from "./src/app.ts";
import { UsageError } from "./src/args.ts";
import type { Config } from "./src/config/types.ts";
import { ConfigError } from "./src/config/error.ts";
import { loadConfig } from "./src/config/load.ts";
import { openKv } from "./src/kv/open.ts";
import { parseServeArgs, SERVE_USAGE, type ServeArgs } from "./src/serve/args.ts";
import { startBanner } from "./src/serve/banner.ts";
import { libcTrim } from "./src/serve/memory_trim.ts";
import { ShutdownSignals } from "./src/serve/shutdown.ts";
import { type HttpServer, serveHttp } from "./src/http/server/server.ts";
import { VERSION } from "./src/version.ts";

/** Prints one line (no stack, no colour) and exits 1 (2 for a usage error). */
function fail(e: unknown): never {
  if (e instanceof UsageError) {
    console.error(`switchyard: ${e.message} (see --help)`);
    Deno.exit(2);
  }
  const message = e instanceof ConfigError
    ? e.message
    : `cannot start: ${e instanceof Error ? e.message : String(e)}`;
  console.error(`switchyard: ${message.replaceAll("\n", " ")}`);
  Deno.exit(1);
}

/** The config named by the flags and env, with `--port`/`--hostname` applied. */
async function readConfig(args: ServeArgs): Promise<Config> {
  const env = (name: string) => Deno.env.get(name);
  const config = await loadConfig({ args: args.config ? ["--config", args.config] : [], env });
  if (args.port !== undefined) config.server.port = args.port;
  if (args.hostname !== undefined) config.server.hostname = args.hostname;
  return config;
}

/** The app, built without seeding the catalogue (that waits for the listener). */
async function build(config: Config): Promise<App> {
  const kv = await openKv(config.kv.path);
  const trimMemory = libcTrim();
  return await createApp({ config, kv, seed: false, ...(trimMemory ? { trimMemory } : {}) });
}

/** A handler that holds requests until `seeded` settles, then is the app's own. */
function afterSeeding(app: App, seeded: Promise<void>): Deno.ServeHandler {
  let handler: Deno.ServeHandler = (request, info) => seeded.then(() => app.handler(request, info));
  seeded.then(() => (handler = app.handler), () => {});
  return (request, info) => handler(request, info);
}

/** `deno task start`, `deno run main.ts` and the compiled binary. */
async function serve(): Promise<void> {
  const args = parseServeArgs(Deno.args);
  if (args.help) return void console.log(SERVE_USAGE);
  if (args.version) return void console.log(VERSION);
  const config = await readConfig(args);
  const app = await build(config);
  const { logger, catalogue } = app.services;
  const { hostname, port, shutdown_grace_seconds, reuse_port } = config.server;
  const seeding = Promise.withResolvers<void>();
  let server: HttpServer;
  try {
    server = serveHttp(
      {
        hostname,
        port,
        reusePort: reuse_port,
        onError: (e) => logger.error("a request failed in the server", e),
      },
      afterSeeding(app, seeding.promise),
    );
  } catch (e) {
    await app.close();
    if (e instanceof Deno.errors.AddrInUse) {
      throw new Error(`${hostname}:${port} is already in use (server.port, PORT or --port)`);
    }
    throw e;
  }
  const stopped = Promise.withResolvers<void>();
  new ShutdownSignals().attach({
    graceMs: shutdown_grace_seconds * 1000,
    info: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
    drain: () => server.shutdown().then(stopped.resolve),
    expired: stopped.resolve,
  });
  await catalogue.seed(config.models);
  seeding.resolve();
  logger.info(startBanner(app, `http://${formatHost(server.addr.hostname)}:${server.addr.port}`));
  await Promise.race([stopped.promise, server.finished]);
  await app.close();
  // Exit before the module finishes evaluating, so Deno does not suggest `deno serve`.
  Deno.exit(0);
}

function formatHost(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** `deno serve [--parallel] main.ts`: each worker builds its app before its first request.
 * `signals` listens from the worker's start, so a signal during the build is not lost. */
async function prepareForDenoServe(
  signals: ShutdownSignals,
): Promise<{ app: App; serve: Deno.ServeDefaultExport }> {
  const config = await readConfig(parseServeArgs(Deno.args));
  const app = await build(config);
  const { logger, catalogue } = app.services;
  const seeding = Promise.withResolvers<void>();
  const handler = afterSeeding(app, seeding.promise);
  let started = false;
  /** Seeds once the listener is bound: deno serve tells one worker (onListen); the others
   * know it from their first request. */
  const start = (url: string | null) => {
    if (started) return;
    started = true;
    catalogue.seed(config.models).then(() => {
      seeding.resolve();
      if (url !== null) logger.info(startBanner(app, url));
    }, fail);
  };
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= app.close());
  signals.attach({
    graceMs: config.server.shutdown_grace_seconds * 1000,
    info: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
    // deno serve stops listening and drains on its own. What would keep the worker alive
    // stops now: the catalogue's watch of KV, and image workers once idle; the rest (the
    // log's last batch) once the last request is done.
    drain: () => {
      catalogue.close();
      app.release();
      addEventListener("beforeunload", () => void close());
    },
    expired: () => close().finally(() => Deno.exit(0)),
  });
  return {
    app,
    serve: {
      fetch(request, info) {
        start(null);
        return handler(request, info);
      },
      onListen(addr) {
        const { hostname, port } = addr as Deno.NetAddr;
        if (hostname !== config.server.hostname || port !== config.server.port) {
          logger.warn(
            `under deno serve the address comes from --host/--port: listening on ` +
              `${formatHost(hostname)}:${port}, not the config's server.hostname/port ` +
              `(${formatHost(config.server.hostname)}:${config.server.port})`,
          );
        }
        start(`http://${formatHost(hostname)}:${port}`);
      },
    },
  };
}

/** Whether this process is `deno serve` (which serves the default export itself). Deno has no
 * API for this (denoland/deno#25179; in 2.9 `Deno.args`, `Deno.mainModule`, `Deno.execPath()`
 * and the environment are the same under `deno run`), so `SWITCHYARD_DENO_SERVE=1` says so, as
 * the README's Scaling command sets it. Else the command line, where Linux shows it and the
 * permissions let it be read: only `--allow-all` does (`/proc/self` is refused even when named
 * in `--allow-read`), so under the start task's flags this is the variable alone. */
function underDenoServe(): boolean {
  if (Deno.env.get("SWITCHYARD_DENO_SERVE") === "1") return true;
  try {
    return Deno.readTextFileSync("/proc/self/cmdline").split("\0")[1] === "serve";
  } catch {
    return false;
  }
}

const served = import.meta.main && underDenoServe()
  ? await prepareForDenoServe(new ShutdownSignals()).catch(fail)
  : null;

/** For `deno serve`: the app built above (config errors end the process before listening). */
export default {
  fetch(request, info) {
    if (served === null) throw new Error("main.ts's default export runs under deno serve only");
    return served.serve.fetch(request, info);
  },
  onListen(addr) {
    served?.serve.onListen?.(addr);
  },
} satisfies Deno.ServeDefaultExport;

if (import.meta.main && served === null) await serve().catch(fail);
