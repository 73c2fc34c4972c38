/**
 * Switchyard's entry point: flags and env → config → KV → `Deno.serve(createApp(...))`.
 *
 * `deno task start` runs it as one process; `deno serve --parallel main.ts` runs the
 * default export on every core (the workers share the KV file).
 */
import { type App, createApp } from "./src/app.ts";
import { ConfigError, loadConfig } from "./src/config.ts";

async function build(): Promise<App> {
  const config = await loadConfig({ args: Deno.args, env: (name) => Deno.env.get(name) });
  const kv = await Deno.openKv(config.kv.path ?? undefined);
  return await createApp({ config, kv });
}

function fail(e: unknown): never {
  const message = e instanceof ConfigError
    ? `switchyard: ${e.message}`
    : `switchyard: cannot start: ${e instanceof Error ? e.message : String(e)}`;
  console.error(message);
  Deno.exit(1);
}

async function serve(): Promise<void> {
  const app = await build().catch(fail);
  const { hostname, port, shutdown_grace_seconds } = app.services.config.server;
  const server = Deno.serve({
    hostname,
    port,
    onListen: ({ hostname, port }) => {
      app.services.logger.info(`switchyard listening on http://${hostname}:${port}`);
    },
  }, app.handler);
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      app.services.logger.info("shutting down: no new connections; finishing open streams");
      setTimeout(resolve, shutdown_grace_seconds * 1000);
      server.shutdown().then(resolve);
    };
    for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, stop);
  });
  await Promise.race([stopped, server.finished]);
  await app.close();
  // Exit before the module finishes evaluating, so Deno does not suggest `deno serve`.
  Deno.exit(0);
}

let lazy: Promise<App> | undefined;

/** For `deno serve`: each worker builds its own app on its first request. */
export default {
  fetch(request, info) {
    lazy ??= build().catch(fail);
    return lazy.then((app) => app.handler(request, info));
  },
} satisfies Deno.ServeDefaultExport;

/** Whether this process is `deno serve` (which serves the default export itself). Deno has no
 * API for this (denoland/deno#25179), so read the command line where Linux shows it. */
function underDenoServe(): boolean {
  if (Deno.env.get("SWITCHYARD_DENO_SERVE") === "1") return true;
  try {
    return Deno.readTextFileSync("/proc/self/cmdline").split("\0")[1] === "serve";
  } catch {
    return false;
  }
}

if (import.meta.main && !underDenoServe()) await serve();
