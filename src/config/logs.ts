/** The `logs` section: how long request records are kept and what they hold. */
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { COUNT, orEmpty } from "./rules.ts";
import type { LogsConfig } from "./types.ts";

/** The `logs` section, every default filled in. */
export function readLogs(r: Reader): LogsConfig {
  const f = orEmpty(r).object();
  const logs: LogsConfig = {
    retention_days: f.integer("retention_days", { optional: true, min: 1, max: 3650 }) ?? 7,
    usage_retention_days:
      f.integer("usage_retention_days", { optional: true, min: 1, max: 36500 }) ?? 400,
    include_content: f.boolean("include_content", OPTIONAL) ?? false,
    max_records_per_minute: f.integer("max_records_per_minute", COUNT) ?? 6_000,
  };
  f.done();
  return logs;
}
