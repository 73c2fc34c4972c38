/**
 * What the embedding adapters share: OpenAI's `encoding_format: "base64"` (a vector's float32
 * values, little-endian, as base64; the simulator writes it, the OpenAI-style adapter converts
 * only when an upstream answered in the other encoding than the one asked for), and the inputs
 * as text for back ends that take no token ids.
 */
import { invalidValue } from "../validation/error.ts";

/** A vector as little-endian float32 bytes in base64. */
export function vectorToBase64(vector: readonly number[]): string {
  const view = new DataView(new ArrayBuffer(vector.length * 4));
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return new Uint8Array(view.buffer).toBase64();
}

/** The float32 values of a base64 vector, or `null` when the text is not one. */
export function vectorFromBase64(base64: string): number[] | null {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(base64);
  } catch {
    return null;
  }
  if (bytes.length % 4 !== 0) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** The inputs of an embeddings request as texts, for a back end that embeds only text (`who`
 * names it); a token-id input is a 400 naming it. */
export function textInputs(input: readonly (string | readonly number[])[], who: string): string[] {
  return input.map((item, i) => {
    if (typeof item === "string") return item;
    throw invalidValue(`input[${i}]`, `expected text: ${who} embeds text, not token ids`);
  });
}
