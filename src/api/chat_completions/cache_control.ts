import type { CacheMarker } from "../../canonical/conversation.ts";
import { absent, invalidType, isObject, kindOf, notThis } from "./checks.ts";
import { invalidValue } from "../../routes/params.ts";

/** Anthropic's cache lifetimes. */
const TTLS = ["5m", "1h"];

/**
 * A `cache_control` marker (`{"type": "ephemeral", "ttl"?: "5m" | "1h"}`): LiteLLM's convention
 * for passing Anthropic prompt caching through the OpenAI format, on content parts, messages
 * and tools. `undefined` when not sent.
 */
export function parseCacheControl(value: unknown, param: string): CacheMarker | undefined {
  if (absent(value)) return undefined;
  if (!isObject(value)) {
    throw invalidType(
      `\`${param}\` must be an object like {"type": "ephemeral"}, not ${kindOf(value)}.`,
      param,
    );
  }
  if (value.type !== "ephemeral") {
    throw invalidValue(
      `\`${param}.type\` must be "ephemeral"${notThis(value.type)}.`,
      `${param}.type`,
    );
  }
  if (absent(value.ttl)) return { type: "ephemeral" };
  if (typeof value.ttl !== "string" || !TTLS.includes(value.ttl)) {
    throw invalidValue(
      `\`${param}.ttl\` must be "5m" or "1h", not ${kindOf(value.ttl)}.`,
      `${param}.ttl`,
    );
  }
  return { type: "ephemeral", ttl: value.ttl };
}
