/**
 * Whether and how one chat call uses its model's response cache (docs/caching.md): the
 * model's `cache`, the key's `cache`, and the request's `Cache-Control` and
 * `x-switchyard-cache-ttl` headers.
 */
import type { Principal } from "../auth/principal.ts";
import type { CacheConfig } from "../config/types.ts";
import { invalidRequest } from "../errors.ts";
import { quote } from "../quote.ts";

/** The request header that asks for an entry's time to live, in seconds. */
export const TTL_HEADER = "x-switchyard-cache-ttl";

/** How a call uses the cache. */
export interface CachePlan {
  /** Whose entries it reads and writes: `key:<id>` or `ns:<namespace>`. */
  scope: string;
  /** Whether it looks for an entry (not with `Cache-Control: no-cache`). */
  lookup: boolean;
  /** How long its answer is kept, in milliseconds. */
  ttlMs: number;
}

/** The plan for a call of a model whose cache is `config`, or `null` when the call does not
 * use it: the key turns it off (or does not turn on a cache that is not `enabled`), the
 * request says `Cache-Control: no-store`, or the caller is anonymous and the cache has no
 * namespace. Throws a 400 naming {@link TTL_HEADER} for a bad value of it. */
export function planCache(
  config: CacheConfig,
  principal: Principal,
  headers: Headers,
): CachePlan | null {
  const ttlSeconds = requestTtl(headers.get(TTL_HEADER), config.max_ttl_seconds) ??
    config.ttl_seconds;
  const keyCache = principal.kind === "key" ? principal.key.cache ?? null : null;
  if (!(keyCache ?? config.enabled)) return null;
  const directives = cacheControl(headers.get("cache-control"));
  if (directives.has("no-store")) return null;
  const scope = config.namespace !== null
    ? `ns:${config.namespace}`
    : principal.kind === "key"
    ? `key:${principal.key.id}`
    : null;
  if (scope === null) return null;
  return { scope, lookup: !directives.has("no-cache"), ttlMs: ttlSeconds * 1000 };
}

/** The seconds `value` asks for (1 to `max`), or `undefined` when the header is absent. */
function requestTtl(value: string | null, max: number): number | undefined {
  if (value === null) return undefined;
  const seconds = /^\s*\d{1,9}\s*$/.test(value) ? Number(value) : NaN;
  if (!(seconds >= 1 && seconds <= max)) {
    throw invalidRequest(
      `Invalid header ${TTL_HEADER}: expected a whole number of seconds from 1 to ${max} (the model's cache maximum), got ${
        quote(value)
      }.`,
      TTL_HEADER,
    );
  }
  return seconds;
}

/** The directives of a `Cache-Control` header, lowercased, without their values. */
function cacheControl(value: string | null): Set<string> {
  const directives = new Set<string>();
  if (value === null) return directives;
  for (const item of value.split(",")) {
    const name = item.split("=", 1)[0]!.trim().toLowerCase();
    if (name !== "") directives.add(name);
  }
  return directives;
}
