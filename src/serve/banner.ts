/** The line printed once the server listens: what an operator checks first. */
import type { App } from "../app.ts";
import { isServed } from "../catalogue/access.ts";
import { VERSION } from "../version.ts";

/** `switchyard 2.0.0 listening on URL; 6 models (5 served); providers: ...; KV: ...`. */
export function startBanner(app: App, url: string): string {
  const { config, catalogue, providers } = app.services;
  const models = catalogue.all();
  const served = models.filter((m) => isServed(m, providers)).length;
  const enabled = config.providers.filter((p) => providers.isAvailable(p.id)).map((p) => p.id);
  const disabled = config.providers.filter((p) => !providers.isAvailable(p.id)).map((p) => p.id);
  const kv = config.kv.path === null ? "Deno's default location (kv.path null)" : config.kv.path;
  return `switchyard ${VERSION} listening on ${url}; ${models.length} models (${served} served); ` +
    `providers enabled: ${enabled.join(", ") || "none"}` +
    (disabled.length > 0 ? ` (disabled: ${disabled.join(", ")})` : "") +
    `; KV: ${kv}`;
}
