import type { CanonicalEvent } from "../../canonical/events.ts";
import { mapGeminiFinish } from "./finish.ts";
import { GeminiPartReader } from "./parts.ts";
import { blockReasonOf, firstCandidate } from "./response.ts";
import { fromGeminiUsage } from "./usage.ts";
import { type JsonObject, malformed, stringField } from "../wire.ts";

/**
 * Translates the events of `streamGenerateContent?alt=sse` (one `GenerateContentResponse`
 * each, no end marker) into canonical events: `start` with the first one's `responseId`; the
 * first candidate's parts as blocks (GeminiPartReader: text and thought pieces appended,
 * each function call whole); and, when the body ends, the last `usageMetadata` as `usage`
 * and the finish from the last `finishReason` (or `promptFeedback.blockReason`). A body that
 * ends before any finish reason is a 502, never a clean stop.
 */
export class GeminiStreamTranslator {
  readonly #scope: string;
  #reader: GeminiPartReader | null = null;
  #usage: unknown = undefined;
  #reason: unknown = undefined;
  #blocked: string | undefined;

  /** `scope` makes the ids of calls that have none when the answer has no `responseId`. */
  constructor(scope: string) {
    this.#scope = scope;
  }

  /** Appends the events of one upstream event to `out`. */
  push(data: JsonObject, out: CanonicalEvent[]): void {
    if (this.#reader === null) {
      const id = stringField(data, "responseId");
      this.#reader = new GeminiPartReader(id ?? this.#scope);
      out.push(id === null ? { type: "start" } : { type: "start", id });
    }
    const { candidate, parts } = firstCandidate(data);
    for (const part of parts) this.#reader.push(part, out);
    if (candidate?.finishReason !== undefined) this.#reason = candidate.finishReason;
    this.#blocked ??= blockReasonOf(data);
    if (data.usageMetadata !== undefined) this.#usage = data.usageMetadata;
  }

  /** The closing events once the body ended; throws the 502 when no finish reason came. */
  end(): CanonicalEvent[] {
    if (this.#reader === null || (this.#reason === undefined && this.#blocked === undefined)) {
      throw malformed("stream: it ended before a finishReason");
    }
    const out: CanonicalEvent[] = [];
    this.#reader.close(out);
    out.push({ type: "usage", usage: fromGeminiUsage(this.#usage) });
    const stop = mapGeminiFinish(this.#reason, this.#reader.called, this.#blocked);
    out.push(
      stop.detail === undefined
        ? { type: "finish", reason: stop.finish }
        : { type: "finish", reason: stop.finish, detail: stop.detail },
    );
    return out;
  }
}
