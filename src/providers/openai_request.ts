import type { ChatMessage, ChatRequest, ContentPart, ToolCall } from "../types/openai.ts";

/** How to write a request for one OpenAI-compatible upstream. */
export interface OpenAIRequestOptions {
  /** The model name the upstream knows. */
  upstreamModel: string;
  stream: boolean;
  /** `max_completion_tokens` for OpenAI itself (every model takes it, reasoning models only
   * it); `max_tokens` for other compatible servers, which may not know the newer name. */
  maxTokensField: "max_tokens" | "max_completion_tokens";
}

/** Fields the gateway writes itself; the same names in `extra` are ignored. */
const OWN_FIELDS = [
  "model",
  "messages",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "tools",
  "tool_choice",
  "stop",
];

/**
 * The body of `POST {base_url}/chat/completions` for a validated request: the upstream model
 * name, messages rebuilt field by field (`developer` sent as `system`, which every
 * compatible server knows), `max_tokens` always, temperature/tools/tool_choice/stop when
 * given, other sampling fields as sent, and for streams always `include_usage`.
 */
export function toOpenAIRequest(
  req: ChatRequest,
  options: OpenAIRequestOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req.extra };
  for (const field of OWN_FIELDS) delete body[field];
  body.model = options.upstreamModel;
  body.messages = req.messages.map(toUpstreamMessage);
  body[options.maxTokensField] = req.max_tokens;
  if (req.temperature_given) body.temperature = req.temperature;
  if (req.stop.length > 0) body.stop = [...req.stop];
  if (req.tools.length > 0) {
    body.tools = req.tools.map((tool) => {
      const fn: Record<string, unknown> = { name: tool.function.name };
      if (tool.function.description !== undefined) fn.description = tool.function.description;
      if (tool.function.parameters !== undefined) fn.parameters = tool.function.parameters;
      if (tool.function.strict !== undefined) fn.strict = tool.function.strict;
      return { type: "function", function: fn };
    });
    if (req.tool_choice !== null) body.tool_choice = req.tool_choice;
  }
  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toUpstreamMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "system":
    case "developer":
      return withName({ role: "system", content: message.content }, message.name);
    case "user":
      return withName({ role: "user", content: parts(message.content) }, message.name);
    case "assistant": {
      const out: Record<string, unknown> = { role: "assistant", content: message.content };
      if (message.tool_calls && message.tool_calls.length > 0) {
        out.tool_calls = message.tool_calls.map(toolCall);
      }
      return withName(out, message.name);
    }
    case "tool":
      return { role: "tool", content: message.content, tool_call_id: message.tool_call_id };
  }
}

function withName(message: Record<string, unknown>, name: string | undefined) {
  if (name !== undefined) message.name = name;
  return message;
}

function parts(content: string | ContentPart[]): string | ContentPart[] {
  if (typeof content === "string") return content;
  return content.map((part): ContentPart => {
    if (part.type === "text") return { type: "text", text: part.text };
    const image: ContentPart = { type: "image_url", image_url: { url: part.image_url.url } };
    if (part.image_url.detail !== undefined) image.image_url.detail = part.image_url.detail;
    return image;
  });
}

function toolCall(call: ToolCall): ToolCall {
  return {
    id: call.id,
    type: "function",
    function: { name: call.function.name, arguments: call.function.arguments },
  };
}
