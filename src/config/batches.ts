/** The `batches` section: the Files and Batch APIs' bounds, retention, and how batch lines
 * share a key's limits with its live traffic. */
import type { Reader } from "../validation/reader.ts";
import { orEmpty } from "./rules.ts";
import type { BatchesConfig } from "./types.ts";

/** The `batches` section, every default filled in. */
export function readBatches(r: Reader): BatchesConfig {
  const f = orEmpty(r).object();
  const batches: BatchesConfig = {
    max_file_bytes: f.integer("max_file_bytes", { optional: true, min: 1, max: 1 << 30 }) ??
      50 * 1024 * 1024,
    max_lines: f.integer("max_lines", { optional: true, min: 1, max: 1_000_000 }) ?? 50_000,
    file_retention_days: f.integer("file_retention_days", { optional: true, min: 1, max: 3650 }) ??
      30,
    limit_share: f.number("limit_share", { optional: true, min: 0.01, max: 1 }) ?? 0.5,
    max_attempts: f.integer("max_attempts", { optional: true, min: 1, max: 20 }) ?? 5,
  };
  f.done();
  return batches;
}
