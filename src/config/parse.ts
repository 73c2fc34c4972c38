/** A parsed config document validated into a {@link Config}, section by section. */
import { DEFAULT_KV_PATH } from "../kv/open.ts";
import { ValidationError } from "../validation/error.ts";
import { readJson } from "../validation/reader.ts";
import { ConfigError } from "./error.ts";
import { readBatches } from "./batches.ts";
import { readLimits } from "./limits.ts";
import { readLogs } from "./logs.ts";
import { readMetrics } from "./metrics.ts";
import { readModels } from "./models.ts";
import { readProviders } from "./providers.ts";
import { orEmpty } from "./rules.ts";
import { readServer } from "./server.ts";
import { readSite } from "./site.ts";
import type { Config } from "./types.ts";

function validate(raw: unknown): Config {
  const root = readJson(raw).object();
  const server = readServer(root.get("server"));
  const kv = orEmpty(root.get("kv")).object();
  const pathField = kv.get("path");
  const kvPath = pathField.value === undefined
    ? DEFAULT_KV_PATH
    : pathField.string({ nullable: true, nonEmpty: true, maxLength: 4096 });
  kv.done();
  const providers = readProviders(root.get("providers"));
  const config: Config = {
    server,
    kv: { path: kvPath },
    providers: [...providers.values()],
    models: readModels(root.get("models"), providers),
    limits: readLimits(root.get("limits")),
    logs: readLogs(root.get("logs")),
    site: readSite(root.get("site")),
    metrics: readMetrics(root.get("metrics")),
    batches: readBatches(root.get("batches")),
  };
  root.get("$schema"); // editors' hint; allowed, not used
  root.done();
  return config;
}

/** Validates a parsed config document; throws {@link ConfigError} naming `source` and the field. */
export function parseConfig(raw: unknown, source: string): Config {
  try {
    return validate(raw);
  } catch (e) {
    if (e instanceof ValidationError) throw new ConfigError(`${source}: ${e.fieldMessage()}`);
    throw e;
  }
}
