/**
 * The fake Anthropic upstream's thinking signatures: like Anthropic's, opaque strings that
 * only the upstream can make and check, bound to the model that thought. Here an HMAC-SHA256
 * of the model and the thinking text under the fake's key, so any change to the text, the
 * signature or the model is caught. Redacted thinking carries its text base64-encoded with
 * such an HMAC.
 */
import { createHmac } from "node:crypto";

/** The key fakes sign with unless told otherwise. */
export const FAKE_SIGNING_KEY = "fake-anthropic-signing-key";

function mac(key: string, kind: string, model: string, text: string): string {
  return createHmac("sha256", key).update(`${kind}\n${model}\n${text}`).digest("base64");
}

/** The signature of a `thinking` block with `thinking` text by `model`. */
export function thinkingSignature(model: string, thinking: string, key = FAKE_SIGNING_KEY): string {
  return mac(key, "thinking", model, thinking);
}

/** The `data` of a `redacted_thinking` block hiding `thinking` by `model`. */
export function redactedThinkingData(
  model: string,
  thinking: string,
  key = FAKE_SIGNING_KEY,
): string {
  const text = new TextEncoder().encode(thinking).toBase64();
  return `${text}.${mac(key, "redacted", model, thinking)}`;
}

/** Whether `data` is the redacted thinking of `model` (unchanged). */
export function isRedactedThinkingData(
  model: string,
  data: string,
  key = FAKE_SIGNING_KEY,
): boolean {
  const dot = data.indexOf(".");
  if (dot < 0) return false;
  let thinking: string;
  try {
    thinking = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.fromBase64(data.slice(0, dot)),
    );
  } catch {
    return false;
  }
  return data === redactedThinkingData(model, thinking, key);
}
