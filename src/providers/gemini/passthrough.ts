/**
 * Gemini API calls forwarded to a Gemini upstream as the client wrote them (DESIGN §6.2's
 * same-protocol path): the body as sent (the model is in the path, rewritten to the upstream's;
 * a `countTokens` body's `generateContentRequest.model` too), so that nothing is lost (thought
 * signatures, safety settings, Google's own tools, cached content, fields the gateway does not
 * model). One change: function declarations' `parametersJsonSchema` keep only the JSON Schema
 * keywords Gemini documents (schema.ts, as on the canonical path), since clients send more
 * (the Gemini CLI sends `$schema`). The answer, and each chunk of a stream, as the upstream wrote it with only
 * `modelVersion` written back to the gateway's model id; the usage read on the way, for the
 * request log. A stream is asked for as SSE and framed for the client as it asked: SSE
 * (`?alt=sse`), or one JSON array.
 */
import type { ApiError } from "../../errors.ts";
import type { SseEvent } from "../../http/sse.ts";
import { type EventReading, type PassedEvent, PassedEvents } from "../passed_events.ts";
import type { CallContext, PassthroughAnswer, PassthroughCall } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, type JsonObject, malformed, parseEventData } from "../wire.ts";
import { toGeminiSchema } from "./schema.ts";
import { fromGeminiUsage } from "./usage.ts";

/** Passes Gemini API calls through to one Gemini provider's upstream. */
export class GeminiForwarder {
  readonly #upstream: Upstream;
  readonly #streamError: (data: unknown) => ApiError;
  readonly #path: (upstreamModel: string, method: string) => string;

  /** `path` makes a model method's path; `streamError` reads an upstream error chunk as the
   * gateway's error. */
  constructor(
    upstream: Upstream,
    path: (upstreamModel: string, method: string) => string,
    streamError: (data: unknown) => ApiError,
  ) {
    this.#upstream = upstream;
    this.#path = path;
    this.#streamError = streamError;
  }

  async forward(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    const upstream = this.#upstream;
    if (call.endpoint === "countTokens") {
      const body = withUpstreamModel(call.body, ctx.upstreamModel);
      const path = this.#path(ctx.upstreamModel, "countTokens");
      const data = await upstream.json(chatPost(ctx, path, body, false));
      if (!isObject(data)) throw malformed("answer (not a JSON object)");
      return { kind: "json", body: data, usage: null };
    }
    // The client's bytes as they are when nothing in them changes (the model is in the path).
    const body = withGeminiSchemas(call.body);
    const post = (path: string, stream: boolean) => {
      const request = chatPost(ctx, path, body, stream);
      if (body === call.body && call.raw) request.rawBody = [call.raw];
      return request;
    };
    if (call.endpoint === "generateContent") {
      const path = this.#path(ctx.upstreamModel, "generateContent");
      const data = await upstream.json(post(path, false));
      if (!isObject(data)) throw malformed("answer (not a JSON object)");
      showClientFields(data, call.shown);
      return { kind: "json", body: data, usage: fromGeminiUsage(data.usageMetadata) };
    }
    // Answered once the upstream answered (an HTTP error is thrown here, where a routed model
    // can still try its next route); the chunks are read as the client pulls.
    const path = this.#path(ctx.upstreamModel, "streamGenerateContent?alt=sse");
    const source = await upstream.call(post(path, true));
    const reading = new GeminiChunks(call.shown, call.framing ?? "sse", this.#streamError);
    return { kind: "stream", batches: new PassedEvents(source, reading) };
  }
}

/** A `countTokens` body whose `generateContentRequest` names the upstream's model. */
function withUpstreamModel(body: JsonObject, upstreamModel: string): JsonObject {
  const whole = body.generateContentRequest;
  if (!isObject(whole)) return body;
  const name = `models/${upstreamModel.replace(/^models\//, "")}`;
  return { ...body, generateContentRequest: { ...whole, model: name } };
}

/** A body whose function declarations' `parametersJsonSchema` hold only what Gemini
 * documents (the rest of the body as sent). */
function withGeminiSchemas(body: JsonObject): JsonObject {
  if (!Array.isArray(body.tools) || !body.tools.some(hasJsonSchemas)) return body;
  const tools = body.tools.map((tool) => {
    if (!isObject(tool) || !Array.isArray(tool.functionDeclarations)) return tool;
    const functionDeclarations = tool.functionDeclarations.map((d) =>
      isObject(d) && isObject(d.parametersJsonSchema)
        ? { ...d, parametersJsonSchema: toGeminiSchema(d.parametersJsonSchema) }
        : d
    );
    return { ...tool, functionDeclarations };
  });
  return { ...body, tools };
}

/** Whether a tool declares a function with `parametersJsonSchema`. */
function hasJsonSchemas(tool: unknown): boolean {
  return isObject(tool) && Array.isArray(tool.functionDeclarations) &&
    tool.functionDeclarations.some((d) => isObject(d) && isObject(d.parametersJsonSchema));
}

/** Writes the client's fields (`modelVersion`) into an answer or a chunk that has them. */
function showClientFields(data: JsonObject, shown: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(shown)) if (key in data) data[key] = value;
}

/**
 * A passed-through stream's chunks: each as it came with the client's `modelVersion`, in the
 * client's framing; the usage of each chunk that has some; an upstream error chunk passed on,
 * ending the stream. Gemini's stream has no end marker: the body's end is the stream's, once
 * a chunk gave a finish reason (or said the prompt was blocked); before that it is a 502.
 */
class GeminiChunks implements EventReading {
  readonly #shown: Record<string, unknown>;
  readonly #framing: "sse" | "json_array";
  readonly #streamError: (data: unknown) => ApiError;
  #chunks = 0;
  #finished = false;

  constructor(
    shown: Record<string, unknown>,
    framing: "sse" | "json_array",
    streamError: (data: unknown) => ApiError,
  ) {
    this.#shown = shown;
    this.#framing = framing;
    this.#streamError = streamError;
  }

  read(event: SseEvent): PassedEvent {
    const data = parseEventData(event.data);
    if (data.error !== undefined) {
      this.#finished = true;
      const text = this.#frame(event.data) + (this.#framing === "json_array" ? "]" : "");
      return { data: event.data, text, ended: true, failure: this.#streamError(data) };
    }
    showClientFields(data, this.#shown);
    const candidate = Array.isArray(data.candidates) ? data.candidates[0] : undefined;
    const feedback = data.promptFeedback;
    if (
      (isObject(candidate) && typeof candidate.finishReason === "string") ||
      (isObject(feedback) && typeof feedback.blockReason === "string")
    ) this.#finished = true;
    const json = JSON.stringify(data);
    const passed: PassedEvent = { data: json, text: this.#frame(json) };
    if (data.usageMetadata !== undefined) passed.usage = fromGeminiUsage(data.usageMetadata);
    return passed;
  }

  unfinished(): Error | null {
    return this.#finished ? null : malformed("stream: it ended before a finishReason");
  }

  closing(): string {
    return this.#framing === "json_array" ? (this.#chunks === 0 ? "[]" : "]") : "";
  }

  /** One chunk's text in the client's framing (Gemini's own SSE: CRLF blank lines). */
  #frame(json: string): string {
    const first = this.#chunks++ === 0;
    if (this.#framing === "sse") return `data: ${json}\r\n\r\n`;
    return (first ? "[" : ",\r\n") + json;
  }
}
