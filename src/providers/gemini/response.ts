import type { Part } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import { mapGeminiFinish } from "./finish.ts";
import { GeminiPartReader } from "./parts.ts";
import { fromGeminiUsage } from "./usage.ts";
import { isObject, type JsonObject, malformed, stringField } from "../wire.ts";

/** The first candidate of a `GenerateContentResponse` and its parts (none when the prompt was
 * blocked); a response with neither candidates nor a block reason is a 502. */
export function firstCandidate(
  data: JsonObject,
): { candidate: JsonObject | null; parts: unknown[] } {
  const candidates = data.candidates;
  if (candidates === undefined || (Array.isArray(candidates) && candidates.length === 0)) {
    return { candidate: null, parts: [] };
  }
  const candidate = Array.isArray(candidates) ? candidates[0] : undefined;
  if (!isObject(candidate)) throw malformed("answer (a candidate that is not an object)");
  const content = candidate.content;
  const parts = isObject(content) && Array.isArray(content.parts) ? content.parts : [];
  return { candidate, parts };
}

/** `promptFeedback.blockReason`, when the prompt was blocked. */
export function blockReasonOf(data: JsonObject): string | undefined {
  const feedback = data.promptFeedback;
  return isObject(feedback) ? stringField(feedback, "blockReason") ?? undefined : undefined;
}

/**
 * A `GenerateContentResponse` as a canonical result: the first candidate's parts (see
 * GeminiPartReader; calls without ids get ids made from the answer's `responseId`, else
 * `scope`), its finish reason (finish.ts) and the usage. A prompt blocked before any
 * answer is an empty result that ends with content_filter. A malformed answer is a 502.
 */
export function fromGeminiResponse(data: unknown, scope: string): CanonicalResult {
  if (!isObject(data)) throw malformed("answer (not an object)");
  const { candidate, parts } = firstCandidate(data);
  const blocked = blockReasonOf(data);
  if (candidate === null && blocked === undefined) throw malformed("answer (no candidates)");
  const id = stringField(data, "responseId") ?? undefined;
  const reader = new GeminiPartReader(id ?? scope);
  const events: CanonicalEvent[] = [];
  for (const part of parts) reader.push(part, events);
  reader.close(events);
  const stop = mapGeminiFinish(candidate?.finishReason, reader.called, blocked);
  const result: CanonicalResult = {
    parts: assemble(events),
    finish: stop.finish,
    usage: fromGeminiUsage(data.usageMetadata),
  };
  if (id !== undefined) result.id = id;
  if (stop.detail !== undefined) result.stopDetail = stop.detail;
  return result;
}

/** The parts that block events make. */
function assemble(events: readonly CanonicalEvent[]): Part[] {
  const parts: Part[] = [];
  for (const event of events) {
    if (event.type === "block_start") {
      const b = event.block;
      parts[event.index] = b.type === "tool_call"
        ? { type: "tool_call", id: b.id, name: b.name, arguments: "" }
        : b.type === "reasoning"
        ? { type: "reasoning", text: "", style: b.style! }
        : { type: "text", text: "" };
    } else if (event.type === "block_delta") {
      const part = parts[event.index]!;
      const d = event.delta;
      if (d.type === "text" && part.type === "text") part.text += d.text;
      else if (d.type === "reasoning" && part.type === "reasoning") part.text += d.text;
      else if (d.type === "signature" && part.type === "reasoning") part.signature = d.signature;
      else if (d.type === "arguments" && part.type === "tool_call") part.arguments += d.json;
    }
  }
  return parts;
}
