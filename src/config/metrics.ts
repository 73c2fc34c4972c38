/** The `metrics` section: whether `/metrics` is served, and the variable of its own token. */
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { orEmpty, TEXT } from "./rules.ts";
import type { MetricsConfig } from "./types.ts";

/** The `metrics` section, every default filled in. */
export function readMetrics(r: Reader): MetricsConfig {
  const f = orEmpty(r).object();
  const tokenEnv = f.string("token_env", { optional: true, nullable: true, ...TEXT });
  const metrics: MetricsConfig = {
    enabled: f.boolean("enabled", OPTIONAL) ?? true,
    token_env: tokenEnv === undefined ? "SWITCHYARD_METRICS_TOKEN" : tokenEnv,
  };
  f.done();
  return metrics;
}
