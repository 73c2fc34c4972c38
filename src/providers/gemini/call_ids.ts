/**
 * Canonical tool-call ids for Gemini's function calls. A Gemini 3 model checks, in the next
 * turn, the `thoughtSignature` that came on the first function call of each step; clients of
 * the OpenAI and Anthropic protocols (and the SDKs over them) send back a call's id and
 * nothing else of it. So the signature travels inside the id: `gs_<length>_<padding>_<data>_`
 * before the call's own id, the base64 signature written in the URL-safe alphabet without
 * its `=` padding (whose count is kept), so that the id stays within `[A-Za-z0-9_-]` (what
 * Anthropic accepts as a tool_use id) and the signature comes back byte for byte.
 *
 * A call's own id is Gemini's (`FunctionCall.id`, which Gemini 3 sends) or, when Gemini gave
 * none, one made here: `swy_<scope>_<n>`, stable for one answer (the scope is the answer's
 * id) and never sent to Gemini as an id.
 */

const SIGNED = /^gs_(\d{1,6})_([0-3])_/;
const BASE64 = /^[A-Za-z0-9+/]*={0,3}$/;
const SYNTHESIZED = "swy_";

/** What a canonical call id holds. */
export interface GeminiCallId {
  /** Gemini's id of the call, or `null` for one the gateway made (or none). */
  geminiId: string | null;
  /** The thought signature the call came with, or `null`. */
  signature: string | null;
}

/** The id the gateway makes for the `index`-th call of an answer whose calls have no ids. */
export function synthesizedCallId(scope: string, index: number): string {
  return `${SYNTHESIZED}${scope.replace(/[^A-Za-z0-9-]/g, "")}_${index}`;
}

/** The canonical id of a call: its own id (Gemini's or {@link synthesizedCallId}) with the
 * signature inside when it has one (a signature that is not base64 is left out). */
export function canonicalCallId(id: string, signature: string | null): string {
  if (signature === null || signature === "" || !BASE64.test(signature)) return id;
  const padding = signature.length - signature.replace(/=+$/, "").length;
  const data = signature.slice(0, signature.length - padding).replaceAll("+", "-")
    .replaceAll("/", "_");
  return `gs_${data.length}_${padding}_${data}_${id}`;
}

/** Reads a canonical call id back (one of another provider's is its own Gemini id). */
export function parseCallId(id: string): GeminiCallId {
  let own = id;
  let signature: string | null = null;
  const signed = SIGNED.exec(id);
  if (signed !== null) {
    const length = Number(signed[1]);
    const start = signed[0].length;
    if (id[start + length] === "_") {
      const data = id.slice(start, start + length).replaceAll("-", "+").replaceAll("_", "/");
      signature = data + "=".repeat(Number(signed[2]));
      own = id.slice(start + length + 1);
    }
  }
  return { geminiId: own === "" || own.startsWith(SYNTHESIZED) ? null : own, signature };
}
