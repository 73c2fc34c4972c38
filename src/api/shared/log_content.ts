/** What the request log keeps of a chat's content, with `logs.include_content` on. */
import type { Part } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";

/** The parts a stream's events add up to, gathered as they pass. */
export class StreamedParts {
  readonly parts: Part[] = [];
  readonly #byIndex = new Map<number, Part>();

  /** Takes one batch of events. */
  add(events: readonly CanonicalEvent[]): void {
    for (const event of events) {
      if (event.type === "block_start") {
        const b = event.block;
        const part: Part = b.type === "tool_call"
          ? { type: "tool_call", id: b.id, name: b.name, arguments: "" }
          : b.type === "reasoning"
          ? { type: "reasoning", text: "" }
          : { type: b.type, text: "" };
        this.#byIndex.set(event.index, part);
        this.parts.push(part);
      } else if (event.type === "block_delta") {
        const part = this.#byIndex.get(event.index);
        const d = event.delta;
        if (part === undefined) continue;
        if (part.type === "tool_call" && d.type === "arguments") part.arguments += d.json;
        else if (
          (part.type === "text" || part.type === "refusal" || part.type === "reasoning") &&
          (d.type === "text" || d.type === "refusal" || d.type === "reasoning")
        ) part.text += d.text;
      }
    }
  }
}
