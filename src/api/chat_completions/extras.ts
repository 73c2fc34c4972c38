import type { Extras } from "../../canonical/conversation.ts";
import { isObject } from "../../validation/reader.ts";

/** Keys never copied from an upstream's object (they would reach the prototype). */
const UNSAFE = new Set(["__proto__", "constructor", "prototype"]);

/**
 * The fields of an `openai_chat` back end's answer that the canonical model does not carry
 * (`system_fingerprint`, `service_tier`, `choices[0].logprobs`, `choices[0].message.annotations`,
 * `usage.prompt_tokens_details.audio_tokens`...), in the answer's own shape, or `null` when the
 * answer came from a back end of another protocol.
 */
export function openAIFields(extras: Extras | undefined): Record<string, unknown> | null {
  return extras?.protocol === "openai_chat" ? extras.fields : null;
}

/**
 * Fills what `target` lacks (absent or `null`) from `source`, recursing into objects and the
 * same positions of arrays: what the gateway rendered always wins.
 */
export function fillIn(target: Record<string, unknown>, source: unknown): void {
  if (!isObject(source)) return;
  for (const [key, value] of Object.entries(source)) {
    if (UNSAFE.has(key)) continue;
    const mine = target[key];
    if (mine === undefined || mine === null) target[key] = value;
    else if (isObject(mine)) fillIn(mine, value);
    else if (Array.isArray(mine) && Array.isArray(value)) {
      mine.forEach((item, i) => {
        if (isObject(item)) fillIn(item, value[i]);
      });
    }
  }
}
