import type {
  CanonicalRequest,
  DocumentPart,
  ImagePart,
  Message,
  OutputFormat,
  Part,
  ReasoningOptions,
  TextPart,
  ToolCallPart,
  ToolChoice,
  ToolResultPart,
  ToolSpec,
} from "../../canonical/conversation.ts";
import { invalidRequest } from "../../errors.ts";
import type { JsonObject } from "../wire.ts";

/** How to write a request for one OpenAI-compatible upstream. */
export interface OpenAIRequestOptions {
  /** The model name the upstream knows. */
  upstreamModel: string;
  stream: boolean;
  /** `max_completion_tokens` for OpenAI itself (every model takes it, reasoning models only
   * it); `max_tokens` for other compatible servers, which may not know the newer name. */
  maxTokensField: "max_tokens" | "max_completion_tokens";
}

/** A chat completions body, and the wire names of what the request asked for but the body
 * leaves out (for the call context's `dropped`). */
export interface OpenAIRequest {
  body: JsonObject;
  dropped: string[];
}

/** Fields the gateway always writes itself: the caller's extras never set them. */
const OWN_FIELDS = [
  "model",
  "messages",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
];

/**
 * The body of `POST {base_url}/chat/completions` for a canonical request. Extras of the chat
 * protocol (`logprobs`, `service_tier`, `prediction`, `store`, ...) go first, as the caller sent
 * them; then the modelled fields: the upstream model name, the messages, max tokens always,
 * sampling fields, `reasoning_effort`, `response_format`, tools (with `tool_choice` and
 * `parallel_tool_calls` only beside tools, where OpenAI accepts them), `user`, `metadata`, and
 * for streams always `include_usage`. Left out and reported: extras of other protocols, `top_k`,
 * a tool result's error flag (`is_error`) and a document's `context` and `citations`, which
 * OpenAI does not have, and reasoning parts of the history (as `reasoning_content`: OpenAI
 * rejects unknown message fields and DeepSeek rejects it in input). Cache markers are left out
 * silently: OpenAI-style upstreams cache prompts by themselves. Throws a 400 naming the field
 * for a document given by URL.
 */
export function toOpenAIRequest(
  req: CanonicalRequest,
  options: OpenAIRequestOptions,
): OpenAIRequest {
  const body: JsonObject = {};
  const dropped: string[] = [];
  if (req.extras.protocol === "openai_chat") Object.assign(body, req.extras.fields);
  else dropped.push(...Object.keys(req.extras.fields));
  for (const field of OWN_FIELDS) delete body[field];

  const o = req.options;
  body.model = options.upstreamModel;
  body.messages = toOpenAIMessages(req.messages);
  const parts = req.messages.flatMap((m) => m.parts);
  if (parts.some((p) => p.type === "reasoning")) dropped.push("reasoning_content");
  if (parts.some((p) => p.type === "tool_result" && p.isError)) dropped.push("is_error");
  const documents = documentsOf(parts);
  if (documents.some((d) => d.context !== undefined)) dropped.push("context");
  if (documents.some((d) => d.citations === true)) dropped.push("citations");
  body[options.maxTokensField] = o.maxTokens;
  if (o.temperature !== undefined) body.temperature = o.temperature;
  if (o.topP !== undefined) body.top_p = o.topP;
  if (o.topK !== undefined) dropped.push("top_k");
  if (o.stop.length > 0) body.stop = [...o.stop];
  if (o.seed !== undefined) body.seed = o.seed;
  if (o.frequencyPenalty !== undefined) body.frequency_penalty = o.frequencyPenalty;
  if (o.presencePenalty !== undefined) body.presence_penalty = o.presencePenalty;
  const effort = reasoningEffort(o.reasoning);
  if (effort !== null) body.reasoning_effort = effort;
  const format = responseFormat(o.output);
  if (format !== null) body.response_format = format;
  if (o.tools.length > 0) {
    body.tools = o.tools.map(toOpenAITool);
    if (o.toolChoice !== null) body.tool_choice = toOpenAIToolChoice(o.toolChoice);
    if (o.parallelToolCalls !== undefined) body.parallel_tool_calls = o.parallelToolCalls;
  }
  if (o.user !== undefined) body.user = o.user;
  if (o.verbosity !== undefined) body.verbosity = o.verbosity;
  if (o.metadata !== undefined) body.metadata = { ...o.metadata };
  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { body, dropped };
}

/**
 * `reasoning_effort` for the request's reasoning options: the effort when given; else, for a
 * thinking budget (Anthropic's `budget_tokens`), `low` under 4096 tokens, `medium` under
 * 16384, `high` from there (Claude Code's "think" 4000 -> low, "think hard" 10000 -> medium,
 * "ultrathink" 31999 -> high); nothing when thinking is off or unspecified (a model that does
 * not reason has nothing to turn off, and OpenAI's reasoning models have no common "off").
 */
function reasoningEffort(reasoning: ReasoningOptions | undefined): string | null {
  if (reasoning === undefined || reasoning.disabled === true) return null;
  if (reasoning.effort !== undefined) return reasoning.effort;
  const budget = reasoning.budgetTokens;
  if (budget === undefined) return null;
  return budget < 4096 ? "low" : budget < 16384 ? "medium" : "high";
}

function responseFormat(output: OutputFormat): JsonObject | null {
  switch (output.type) {
    case "text":
      return null;
    case "json":
      return { type: "json_object" };
    case "json_schema": {
      const schema: JsonObject = { name: output.name };
      if (output.description !== undefined) schema.description = output.description;
      schema.schema = output.schema;
      schema.strict = output.strict;
      return { type: "json_schema", json_schema: schema };
    }
  }
}

function toOpenAITool(tool: ToolSpec): JsonObject {
  const fn: JsonObject = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.parameters !== undefined) fn.parameters = tool.parameters;
  if (tool.strict !== undefined) fn.strict = tool.strict;
  return { type: "function", function: fn };
}

function toOpenAIToolChoice(choice: ToolChoice): unknown {
  return typeof choice === "string"
    ? choice
    : { type: "function", function: { name: choice.name } };
}

/**
 * OpenAI messages for canonical ones: `developer` as `system` (which every compatible server
 * knows); system, assistant and tool text as one string (parts joined by newlines: some
 * servers, Groq among them, take only a string there); user content a string when it is one
 * text, else text, `image_url` and document parts (see {@link documentPart}) in order; each
 * tool result its own `tool` message, in order, before the rest of the message it came in;
 * images and documents a tool returned (a tool message holds only text) in a user message
 * after the run of tool messages; assistant refusals as `refusal`; reasoning parts left out.
 */
function toOpenAIMessages(messages: readonly Message[]): JsonObject[] {
  const out: JsonObject[] = [];
  let toolMedia: JsonObject[] = [];
  const flushToolMedia = () => {
    if (toolMedia.length > 0) out.push({ role: "user", content: toolMedia });
    toolMedia = [];
  };
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    switch (message.role) {
      case "system":
      case "developer":
        flushToolMedia();
        out.push(named({ role: "system", content: joinedText(message.parts) }, message.name));
        break;
      case "assistant":
        flushToolMedia();
        out.push(named(assistantMessage(message.parts), message.name));
        break;
      case "user":
      case "tool": {
        message.parts.forEach((part, j) => {
          if (part.type !== "tool_result") return;
          out.push(toolMessage(part));
          part.content.forEach((c, k) => {
            const param = `${at}.content[${j}].content[${k}]`;
            if (c.type !== "text") toolMedia.push(mediaPart(c, param));
          });
        });
        const content = userContent(message.parts, at);
        if (content.length === 0) break;
        const parts = [...toolMedia, ...content];
        toolMedia = [];
        const single = parts.length === 1 && parts[0]!.type === "text";
        out.push(named({ role: "user", content: single ? parts[0]!.text : parts }, message.name));
        break;
      }
    }
  });
  flushToolMedia();
  return out;
}

function named(message: JsonObject, name: string | undefined): JsonObject {
  if (name !== undefined) message.name = name;
  return message;
}

function assistantMessage(parts: readonly Part[]): JsonObject {
  const texts = parts.filter((p): p is TextPart => p.type === "text");
  const refusals = parts.filter((p) => p.type === "refusal");
  const calls = parts.filter((p): p is ToolCallPart => p.type === "tool_call");
  const message: JsonObject = {
    role: "assistant",
    content: texts.length > 0 || (refusals.length === 0 && calls.length === 0)
      ? joinedText(parts)
      : null,
  };
  if (refusals.length > 0) message.refusal = refusals.map((p) => p.text).join("\n");
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return message;
}

function toolMessage(result: ToolResultPart): JsonObject {
  return { role: "tool", content: joinedText(result.content), tool_call_id: result.callId };
}

/** The text parts of `parts` joined by newlines (other parts left out). */
function joinedText(parts: readonly Part[]): string {
  return parts.filter((p): p is TextPart => p.type === "text").map((p) => p.text).join("\n");
}

/** A user message's text, image and document parts on the wire (other parts left out); `at`
 * names the message in errors. */
function userContent(parts: readonly Part[], at: string): JsonObject[] {
  const out: JsonObject[] = [];
  parts.forEach((part, j) => {
    if (part.type === "text") out.push({ type: "text", text: part.text });
    else if (part.type === "image" || part.type === "document") {
      out.push(mediaPart(part, `${at}.content[${j}]`));
    }
  });
  return out;
}

/** The documents of `parts`, those of tool results included. */
function documentsOf(parts: readonly Part[]): DocumentPart[] {
  return parts.flatMap((p) =>
    p.type === "document" ? [p] : p.type === "tool_result" ? p.content.filter(isDocument) : []
  );
}

function isDocument(part: Part): part is DocumentPart {
  return part.type === "document";
}

/** An image or document part on the wire; `param` names the part in errors. */
function mediaPart(part: ImagePart | DocumentPart, param: string): JsonObject {
  return part.type === "image" ? imageUrlPart(part) : documentPart(part, param);
}

/** A PDF's file name: its title, ending in `.pdf` (OpenAI tells a file's type by it), else
 * `document.pdf`. */
function pdfFilename(title: string | undefined): string {
  if (!title) return "document.pdf";
  return /\.pdf$/i.test(title) ? title : `${title}.pdf`;
}

/**
 * A document as chat completions take it: a PDF as a `file` part with its data URL and a
 * filename ({@link pdfFilename}: OpenAI requires one beside `file_data`), a text as
 * a text part (its title on the first line). A 400 naming the field for a document by URL,
 * which chat completions cannot take.
 */
function documentPart(part: DocumentPart, param: string): JsonObject {
  const { source } = part;
  switch (source.kind) {
    case "data": {
      const file_data = `data:${source.mediaType};base64,${source.base64}`;
      return { type: "file", file: { filename: pdfFilename(part.title), file_data } };
    }
    case "text":
      return {
        type: "text",
        text: part.title === undefined ? source.text : `${part.title}\n${source.text}`,
      };
    case "url": {
      const field = `${param}.file.file_url`;
      throw invalidRequest(
        `${field} must be a base64 PDF or a text document: chat completions take files inline, not by URL.`,
        field,
      );
    }
  }
}

function imageUrlPart(part: ImagePart): JsonObject {
  const { source } = part;
  const url = source.kind === "data"
    ? `data:${source.mediaType};base64,${source.base64}`
    : source.url;
  const imageUrl: JsonObject = { url };
  if (part.detail !== undefined) imageUrl.detail = part.detail;
  return { type: "image_url", image_url: imageUrl };
}
