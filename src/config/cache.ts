/** A model's `cache` entry: the response cache's settings for its chat calls (docs/caching.md). */
import type { Reader } from "../validation/reader.ts";
import { OPTIONAL } from "../validation/reader.ts";
import type { CacheConfig, SemanticCacheConfig } from "./types.ts";

/** The longest an entry is kept: 30 days. */
const MAX_TTL_SECONDS = 30 * 24 * 60 * 60;
const TTL = { min: 1, max: MAX_TTL_SECONDS } as const;
/** The largest answer stored by default (its JSON's bytes), and the largest allowed. */
export const DEFAULT_MAX_ENTRY_BYTES = 2 * 1024 * 1024;
const ENTRY_BYTES = { optional: true, min: 1024, max: 64 * 1024 * 1024 } as const;
/** A namespace: what KV keys take safely, and a log line shows plainly. */
const NAMESPACE = {
  optional: true,
  pattern: /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/,
  format: "1 to 64 letters, digits and . _ : - (starting with a letter or digit)",
} as const;

/** A model's `cache`: `undefined` when absent, `null` or `false`. */
export function readCache(r: Reader): CacheConfig | undefined {
  if (r.value === undefined || r.value === null || r.value === false) return undefined;
  const f = r.object({ expected: "an object with ttl_seconds, or false" });
  const ttl = f.integer("ttl_seconds", TTL);
  const max = f.integer("max_ttl_seconds", { ...TTL, optional: true }) ?? ttl;
  if (max < ttl) {
    throw f.get("max_ttl_seconds").invalid(`must be at least ttl_seconds (${ttl})`);
  }
  const cache: CacheConfig = {
    ttl_seconds: ttl,
    max_ttl_seconds: max,
    enabled: f.boolean("enabled", OPTIONAL) ?? true,
    namespace: f.string("namespace", NAMESPACE) ?? null,
    charge_hits: f.boolean("charge_hits", OPTIONAL) ?? false,
    store_refusals: f.boolean("store_refusals", OPTIONAL) ?? false,
    max_entry_bytes: f.integer("max_entry_bytes", ENTRY_BYTES) ?? DEFAULT_MAX_ENTRY_BYTES,
    semantic: readSemantic(f.get("semantic")),
  };
  f.done();
  return cache;
}

/** A cache's `semantic`: `null` when absent, `null` or `false`. */
function readSemantic(r: Reader): SemanticCacheConfig | null {
  if (r.value === undefined || r.value === null || r.value === false) return null;
  const f = r.object({ expected: "an object with model, or false" });
  const semantic: SemanticCacheConfig = {
    // An id of the models section (checked there, with the other models).
    model: f.string("model", { nonEmpty: true, maxLength: 128 }),
    threshold: f.number("threshold", { optional: true, min: 0.5, max: 1 }) ?? 0.95,
    max_candidates: f.integer("max_candidates", { optional: true, min: 1, max: 1000 }) ?? 100,
  };
  f.done();
  return semantic;
}
