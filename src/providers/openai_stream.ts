import type { ChatChunk, Delta, FinishReason, Usage } from "../types/openai.ts";
import { ChunkWriter, usageOf } from "./chunks.ts";
import { newCompletionId, newToolCallId, normalizeFinishReason } from "./openai_response.ts";
import { isObject, type JsonObject, malformed, openAIUsage, stringField } from "./wire.ts";

/**
 * Turns an OpenAI-compatible upstream's stream chunks into the public chunk sequence,
 * whatever liberties the upstream takes: `model` becomes the gateway's id; the first chunk
 * of a choice carries the role; a tool call's first fragment carries id and name with empty
 * arguments and later ones only argument pieces; finish reasons are held back for one last
 * `delta: {}` chunk per choice; usage (wherever the upstream put it) goes into one final
 * `choices: []` chunk.
 */
export class OpenAIStreamNormalizer {
  readonly #model: string;
  readonly #now: number;
  #writer: ChunkWriter | null = null;
  readonly #started = new Set<number>();
  readonly #calls = new Set<string>();
  readonly #calledTools = new Set<number>();
  readonly #finish = new Map<number, FinishReason>();
  #usage: Usage | null = null;

  constructor(model: string, now: number) {
    this.#model = model;
    this.#now = now;
  }

  /** Whether some choice has received its finish reason. */
  get finished(): boolean {
    return this.#finish.size > 0;
  }

  /** The public chunks for one upstream chunk (possibly none). */
  push(data: JsonObject): ChatChunk[] {
    const writer = this.#writer ??= new ChunkWriter(
      stringField(data, "id") ?? newCompletionId(),
      typeof data.created === "number" ? data.created : Math.floor(this.#now / 1000),
      this.#model,
    );
    if (isObject(data.usage)) this.#usage = openAIUsage(data.usage);
    const out: ChatChunk[] = [];
    const choices = Array.isArray(data.choices) ? data.choices : [];
    for (const choice of choices) {
      if (!isObject(choice)) throw malformed("stream chunk (a choice that is not an object)");
      const index = typeof choice.index === "number" ? choice.index : 0;
      const deltas = this.#deltas(index, isObject(choice.delta) ? choice.delta : {});
      if (!this.#started.has(index)) {
        this.#started.add(index);
        const first = deltas[0]?.tool_calls ? deltas.shift()! : null;
        deltas.unshift(
          first
            ? { role: "assistant", content: null, ...first }
            : { role: "assistant", content: "" },
        );
      }
      for (const delta of deltas) out.push(writer.delta(delta, index));
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        this.#finish.set(
          index,
          normalizeFinishReason(choice.finish_reason, this.#calledTools.has(index)),
        );
      }
    }
    return out;
  }

  /** The closing chunks: a finish chunk per choice, then the usage chunk. */
  end(): ChatChunk[] {
    const writer = this.#writer ??= new ChunkWriter(
      newCompletionId(),
      Math.floor(this.#now / 1000),
      this.#model,
    );
    const out: ChatChunk[] = [];
    if (this.#started.size === 0) {
      this.#started.add(0);
      out.push(writer.delta({ role: "assistant", content: "" }));
    }
    for (const index of [...this.#started].sort((a, b) => a - b)) {
      const reason = this.#finish.get(index) ??
        normalizeFinishReason(null, this.#calledTools.has(index));
      out.push(writer.finish(reason, index));
    }
    out.push(writer.usage(this.#usage ?? usageOf(0, 0)));
    return out;
  }

  #deltas(index: number, delta: JsonObject): Delta[] {
    const deltas: Delta[] = [];
    const content = stringField(delta, "content");
    if (content) deltas.push({ content });
    if (!Array.isArray(delta.tool_calls)) return deltas;
    delta.tool_calls.forEach((call, position) => {
      if (!isObject(call)) throw malformed("stream chunk (a tool call that is not an object)");
      const callIndex = typeof call.index === "number" ? call.index : position;
      const fn = isObject(call.function) ? call.function : {};
      const key = `${index}:${callIndex}`;
      if (!this.#calls.has(key)) {
        const name = stringField(fn, "name");
        if (name === null) throw malformed("stream chunk (a new tool call without a name)");
        this.#calls.add(key);
        this.#calledTools.add(index);
        deltas.push({
          tool_calls: [{
            index: callIndex,
            id: stringField(call, "id") ?? newToolCallId(),
            type: "function",
            function: { name, arguments: "" },
          }],
        });
      }
      const args = typeof fn.arguments === "string"
        ? fn.arguments
        : isObject(fn.arguments)
        ? JSON.stringify(fn.arguments)
        : "";
      if (args !== "") {
        deltas.push({ tool_calls: [{ index: callIndex, function: { arguments: args } }] });
      }
    });
    return deltas;
  }
}
