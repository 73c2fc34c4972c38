/**
 * The gateway's `encrypted_content` of a reasoning item (README "Responses API"): a reasoning
 * part from any back end - its text, Anthropic's signature or redacted payload, and the style
 * it came from - packed so that a client that sends the item back gives the gateway the same
 * part again, losslessly. It is `swy1.` and the base64url of the part's JSON; it is not
 * encrypted (the payloads inside are the upstreams' own, which they check themselves).
 * Anything else in `encrypted_content` is an upstream's own payload (OpenAI's): it becomes a
 * reasoning part of style {@link OPENAI_RESPONSES_STYLE}, which no other style is sent.
 */
import type { ReasoningPart } from "../../canonical/conversation.ts";
import { isObject } from "../../validation/reader.ts";

/** What every envelope starts with. */
export const ENVELOPE_PREFIX = "swy1.";

/** The style of reasoning that only OpenAI's Responses API can check. */
export const OPENAI_RESPONSES_STYLE = "openai_responses";

/** The envelope for a reasoning part. */
export function encodeReasoning(part: ReasoningPart): string {
  const packed: Record<string, string> = { text: part.text };
  if (part.signature !== undefined) packed.signature = part.signature;
  if (part.redacted !== undefined) packed.redacted = part.redacted;
  if (part.style !== undefined) packed.style = part.style;
  const bytes = new TextEncoder().encode(JSON.stringify(packed));
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return ENVELOPE_PREFIX +
    btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Whether `content` is one of the gateway's envelopes. */
export function isEnvelope(content: string): boolean {
  return content.startsWith(ENVELOPE_PREFIX);
}

/**
 * The reasoning part of an item sent back: the envelope's part, or for an upstream's own
 * payload a part of style {@link OPENAI_RESPONSES_STYLE} carrying it with the summary's text;
 * `null` for an envelope that does not decode.
 */
export function decodeReasoning(content: string, summary: string): ReasoningPart | null {
  if (!isEnvelope(content)) {
    return { type: "reasoning", text: summary, redacted: content, style: OPENAI_RESPONSES_STYLE };
  }
  let packed: unknown;
  try {
    const base64 = content.slice(ENVELOPE_PREFIX.length).replaceAll("-", "+").replaceAll("_", "/");
    const binary = atob(base64);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    packed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return null;
  }
  if (!isObject(packed) || typeof packed.text !== "string") return null;
  const part: ReasoningPart = { type: "reasoning", text: packed.text };
  for (const key of ["signature", "redacted", "style"] as const) {
    const value = packed[key];
    if (typeof value === "string") part[key] = value;
    else if (value !== undefined) return null;
  }
  return part;
}
