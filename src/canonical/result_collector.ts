/** A streamed answer gathered whole: the Responses door's final Response, the response cache's entry. */
import type { Extras, Part } from "./conversation.ts";
import type { CanonicalEvent } from "./events.ts";
import type { FinishReason, Usage } from "./result.ts";

/** A stream's events added up to the whole result, every part as a non-streamed answer has it
 * (reasoning with its signature, redacted payload and style). */
export class ResultCollector {
  readonly parts: Part[] = [];
  usage: Usage | null = null;
  finish: FinishReason | null = null;
  /** The upstream's own stop reason, when its finish event gave one. */
  detail: string | undefined;
  /** The protocol's fields of the answer (the finish event's, else the start event's). */
  extras: Extras | undefined;
  readonly #byIndex = new Map<number, Part>();

  /** Takes one batch of events. */
  add(events: readonly CanonicalEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case "block_start": {
          const b = event.block;
          let part: Part;
          if (b.type === "tool_call") {
            part = { type: "tool_call", id: b.id, name: b.name, arguments: "" };
          } else if (b.type === "reasoning") {
            part = { type: "reasoning", text: "" };
            if (b.redacted !== undefined) part.redacted = b.redacted;
            if (b.style !== undefined) part.style = b.style;
          } else {
            part = { type: b.type, text: "" };
          }
          this.#byIndex.set(event.index, part);
          this.parts.push(part);
          break;
        }
        case "block_delta": {
          const part = this.#byIndex.get(event.index);
          const d = event.delta;
          if (part === undefined) break;
          if (part.type === "tool_call" && d.type === "arguments") part.arguments += d.json;
          else if (part.type === "reasoning" && d.type === "signature") {
            part.signature = (part.signature ?? "") + d.signature;
          } else if (
            (part.type === "text" || part.type === "refusal" || part.type === "reasoning") &&
            (d.type === "text" || d.type === "refusal" || d.type === "reasoning")
          ) part.text += d.text;
          break;
        }
        case "usage":
          this.usage = event.usage;
          break;
        case "start":
          this.extras ??= event.extras;
          break;
        case "finish":
          if (this.finish === null) {
            this.finish = event.reason;
            this.detail = event.detail;
            if (event.extras !== undefined) this.extras = event.extras;
          }
          break;
      }
    }
  }
}
