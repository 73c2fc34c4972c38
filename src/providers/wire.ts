import { upstreamError } from "../errors.ts";
import type { Usage } from "../types/openai.ts";
import { usageOf } from "./chunks.ts";

/** A JSON object as parsed from an upstream answer. */
export type JsonObject = Record<string, unknown>;

/** Whether a parsed JSON value is an object (not an array or null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string field, or `null` when absent or not a string. */
export function stringField(obj: JsonObject, key: string): string | null {
  const value = obj[key];
  return typeof value === "string" ? value : null;
}

/** A finite number field, or 0. */
export function countField(obj: JsonObject, key: string): number {
  const value = obj[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** The 502 for an upstream answer that does not have the documented shape. */
export function malformed(what: string): Error {
  return upstreamError(`The upstream provider answered with a malformed ${what}.`);
}

/** Parses one SSE data payload as a JSON object, or throws the 502 for garbage. */
export function parseEventData(data: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw malformed("stream event (not JSON)");
  }
  if (!isObject(value)) throw malformed("stream event (not a JSON object)");
  return value;
}

/** OpenAI-style usage from an upstream `usage` object (missing counts are 0). */
export function openAIUsage(value: unknown): Usage {
  if (!isObject(value)) return usageOf(0, 0);
  return usageOf(countField(value, "prompt_tokens"), countField(value, "completion_tokens"));
}
