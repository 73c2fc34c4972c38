/**
 * What a request costs (DESIGN §4.1 `pricing`: currency units per million tokens), in
 * millionths of a currency unit ("micros"), integers, so that sums in KV are exact.
 */
import type { Usage } from "../canonical/result.ts";
import type { Pricing } from "../config/types.ts";

/** The cost of `usage` at `pricing`, in micros (rounded up: a started micro is charged). */
export function costMicros(usage: Usage, pricing: Pricing): number {
  const cached = usage.cachedInput ?? 0;
  const written = usage.cacheWrite ?? 0;
  const plain = Math.max(0, usage.input - cached - written);
  // Price per million tokens × tokens = micros.
  const micros = plain * pricing.input +
    cached * (pricing.cached_input ?? pricing.input) +
    written * (pricing.cache_write ?? pricing.input) +
    usage.output * pricing.output;
  return Math.ceil(micros - 1e-9);
}

/** The most a request may cost: all `input` tokens at the dearest input price, `output` at the
 * output price, in micros. */
export function worstCostMicros(input: number, output: number, pricing: Pricing): number {
  const dearest = Math.max(pricing.input, pricing.cache_write ?? 0, pricing.cached_input ?? 0);
  return Math.ceil(input * dearest + output * pricing.output);
}

/** Micros as currency units, for logs and reports. */
export function fromMicros(micros: number): number {
  return micros / 1_000_000;
}
