import type { Usage } from "../../canonical/result.ts";
import { countField, isObject, usageOf } from "../wire.ts";

/**
 * Canonical usage from Converse's: `inputTokens` counts what was not read from or written to
 * the prompt cache, so the canonical input adds `cacheReadInputTokens` (-> `cachedInput`) and
 * `cacheWriteInputTokens` (-> `cacheWrite`); `outputTokens` as output. Missing counts are 0;
 * missing cache counts are left out.
 */
export function fromConverseUsage(usage: unknown): Usage {
  if (!isObject(usage)) return usageOf(0, 0);
  const read = count(usage.cacheReadInputTokens);
  const write = count(usage.cacheWriteInputTokens);
  return usageOf(
    countField(usage, "inputTokens") + (read ?? 0) + (write ?? 0),
    countField(usage, "outputTokens"),
    { cachedInput: read, cacheWrite: write },
  );
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
