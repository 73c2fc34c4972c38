import type { CacheMarker } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";

const TYPES = ["ephemeral"] as const;
/** Anthropic's cache lifetimes. */
const TTLS = ["5m", "1h"] as const;

/**
 * A `cache_control` marker (`{"type": "ephemeral", "ttl"?: "5m" | "1h"}`): LiteLLM's convention
 * for passing Anthropic prompt caching through the OpenAI format, on content parts, messages
 * and tools. `undefined` when not sent.
 */
export function parseCacheControl(marker: Fields | undefined): CacheMarker | undefined {
  if (marker === undefined) return undefined;
  const type = marker.oneOf("type", TYPES);
  const ttl = marker.oneOf("ttl", TTLS, OPTIONAL);
  return ttl === undefined ? { type } : { type, ttl };
}
