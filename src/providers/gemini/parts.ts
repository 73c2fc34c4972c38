import type { CanonicalEvent } from "../../canonical/events.ts";
import { canonicalCallId, synthesizedCallId } from "./call_ids.ts";
import { GEMINI_STYLE } from "./contents.ts";
import { isObject, type JsonObject, malformed, stringField } from "../wire.ts";

/**
 * Turns the parts of a Gemini answer, in order and as they arrive (whole, or a stream's
 * pieces), into canonical blocks numbered from `firstIndex`:
 * - text parts -> one text block, consecutive pieces appended;
 * - thought parts (`thought: true`) -> one reasoning block of style `gemini`, pieces appended;
 * - a `thoughtSignature` on a thought -> the block's signature, and the block ends; on a text
 *   part -> the text block ends and a reasoning block of style `gemini` holding only the
 *   signature follows (so it goes back after that text);
 * - `functionCall` -> a tool-call block: its arguments as one JSON fragment, its id Gemini's or
 *   one made for it, with the signature inside (call_ids.ts);
 * - other parts (code execution, inline data...) are skipped.
 */
export class GeminiPartReader {
  readonly #scope: string;
  #next: number;
  #open: { kind: "text" | "thought"; index: number } | null = null;
  #calls = 0;

  /** `scope` makes the ids of calls that have none (the answer's id). */
  constructor(scope: string, firstIndex = 0) {
    this.#scope = scope;
    this.#next = firstIndex;
  }

  /** Whether a function call was read. */
  get called(): boolean {
    return this.#calls > 0;
  }

  /** Appends the events of one part to `out`. */
  push(part: unknown, out: CanonicalEvent[]): void {
    if (!isObject(part)) throw malformed("answer (a part that is not an object)");
    const signature = stringField(part, "thoughtSignature") || null;
    if (part.functionCall !== undefined) return this.#call(part.functionCall, signature, out);
    const text = stringField(part, "text");
    if (text === null) return;
    if (part.thought === true) {
      const index = this.#block("thought", out);
      if (text !== "") out.push({ type: "block_delta", index, delta: { type: "reasoning", text } });
      if (signature !== null) {
        out.push({ type: "block_delta", index, delta: { type: "signature", signature } });
        this.close(out);
      }
      return;
    }
    if (text !== "") {
      const index = this.#block("text", out);
      out.push({ type: "block_delta", index, delta: { type: "text", text } });
    }
    if (signature !== null) {
      this.close(out);
      const index = this.#next++;
      out.push({ type: "block_start", index, block: { type: "reasoning", style: GEMINI_STYLE } });
      out.push({ type: "block_delta", index, delta: { type: "signature", signature } });
      out.push({ type: "block_stop", index });
    }
  }

  /** Ends the open text or reasoning block, if any. */
  close(out: CanonicalEvent[]): void {
    if (this.#open === null) return;
    out.push({ type: "block_stop", index: this.#open.index });
    this.#open = null;
  }

  /** The index of an open block of `kind`, opened now if need be. */
  #block(kind: "text" | "thought", out: CanonicalEvent[]): number {
    if (this.#open?.kind === kind) return this.#open.index;
    this.close(out);
    const index = this.#next++;
    this.#open = { kind, index };
    out.push({
      type: "block_start",
      index,
      block: kind === "text" ? { type: "text" } : { type: "reasoning", style: GEMINI_STYLE },
    });
    return index;
  }

  #call(call: unknown, signature: string | null, out: CanonicalEvent[]): void {
    const name = isObject(call) ? stringField(call, "name") : null;
    if (!isObject(call) || !name) throw malformed("answer (a functionCall without a name)");
    this.close(out);
    const own = stringField(call, "id") || synthesizedCallId(this.#scope, this.#calls);
    this.#calls++;
    const index = this.#next++;
    const args = callArguments(call.args);
    out.push({
      type: "block_start",
      index,
      block: { type: "tool_call", id: canonicalCallId(own, signature), name },
    });
    out.push({
      type: "block_delta",
      index,
      delta: { type: "arguments", json: JSON.stringify(args) },
    });
    out.push({ type: "block_stop", index });
  }
}

/** A function call's `args`: an object (absent: none); the JSON text of one, as some
 * compatible servers send it, is read; anything else is a malformed answer, never `{}`. */
function callArguments(args: unknown): JsonObject {
  if (args === undefined || args === null) return {};
  if (isObject(args)) return args;
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isObject(parsed)) return parsed;
    } catch {
      // below
    }
  }
  throw malformed("answer (a functionCall whose args are not an object)");
}
