import { invalidRequest } from "../errors.ts";
import { parseImageDataUrl, UNCAPPED } from "../http/image_data_url.ts";
import type {
  ImageMediaType,
  Message,
  MessagesRequest,
  RequestBlock,
  TextBlock,
  ToolChoice,
  ToolResultBlock,
} from "../types/anthropic.ts";
import type {
  AssistantMessage,
  ChatRequest,
  ContentPart,
  TextPart,
  ToolMessage,
} from "../types/openai.ts";

/** OpenAI's temperature range is 0–2, Anthropic's 0–1: a given temperature is halved
 * (0 → 0, 1 → 0.5, 2 → 1); an absent one stays absent (Anthropic's default, 1.0, applies). */
export function anthropicTemperature(t: number): number {
  return Math.min(1, Math.max(0, t / 2));
}

/**
 * The Messages API body for a validated chat request: system and developer messages hoisted
 * into `system`; consecutive same-role turns merged; `tool` messages become `tool_result`
 * blocks of the next user turn; assistant tool calls become `tool_use` blocks; image data URLs
 * become base64 image blocks; blank text is dropped (Anthropic rejects it); `max_tokens`
 * always sent. Throws a 400 naming the field for tool-call arguments that are not a JSON
 * object.
 */
export function toAnthropicRequest(
  req: ChatRequest,
  upstreamModel: string,
  stream: boolean,
): MessagesRequest {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  const add = (role: Message["role"], blocks: RequestBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) (last.content as RequestBlock[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };
  req.messages.forEach((message, i) => {
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...textBlocks(message.content));
        break;
      case "tool":
        add("user", [toolResult(message)]);
        break;
      case "user":
        add("user", userBlocks(message.content, `messages[${i}].content`));
        break;
      case "assistant":
        add("assistant", assistantBlocks(message, i));
    }
  });
  if (messages.length === 0) {
    throw invalidRequest(
      "messages must contain at least one user or assistant message with content.",
      "messages",
    );
  }

  const body: MessagesRequest = { model: upstreamModel, messages, max_tokens: req.max_tokens };
  if (system.length > 0) body.system = system;
  if (req.stop.length > 0) body.stop_sequences = [...req.stop];
  if (req.temperature_given) body.temperature = anthropicTemperature(req.temperature);
  if (typeof req.extra.top_p === "number") body.top_p = req.extra.top_p;
  if (typeof req.extra.user === "string") body.metadata = { user_id: req.extra.user };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((tool) => {
      const out: NonNullable<MessagesRequest["tools"]>[number] = {
        name: tool.function.name,
        input_schema: { type: "object", properties: {}, ...tool.function.parameters },
      };
      if (tool.function.description !== undefined) out.description = tool.function.description;
      return out;
    });
    const choice = toolChoice(req);
    if (choice) body.tool_choice = choice;
  }
  if (stream) body.stream = true;
  return body;
}

function toolChoice(req: ChatRequest): ToolChoice | null {
  const serial = req.extra.parallel_tool_calls === false;
  const choice = req.tool_choice;
  if (choice === "none") return { type: "none" };
  let out: ToolChoice;
  if (choice === "required") out = { type: "any" };
  else if (choice !== null && typeof choice === "object") {
    out = { type: "tool", name: choice.function.name };
  } else if (choice === "auto" || serial) out = { type: "auto" };
  else return null;
  if (serial) out.disable_parallel_tool_use = true;
  return out;
}

function isBlank(text: string): boolean {
  return text.trim() === "";
}

function textBlocks(content: string | TextPart[]): TextBlock[] {
  if (typeof content === "string") return isBlank(content) ? [] : [{ type: "text", text: content }];
  return content.filter((p) => !isBlank(p.text)).map((p) => ({ type: "text", text: p.text }));
}

function userBlocks(
  content: string | ContentPart[],
  param: string,
): RequestBlock[] {
  if (typeof content === "string") return textBlocks(content);
  const blocks: RequestBlock[] = [];
  content.forEach((part, j) => {
    if (part.type === "text") {
      if (!isBlank(part.text)) blocks.push({ type: "text", text: part.text });
      return;
    }
    const image = parseImageDataUrl(part.image_url.url, `${param}[${j}].image_url.url`, UNCAPPED);
    blocks.push({
      type: "image",
      source: { type: "base64", media_type: image.mediaType as ImageMediaType, data: image.base64 },
    });
  });
  return blocks;
}

function toolResult(message: ToolMessage): ToolResultBlock {
  const result: ToolResultBlock = { type: "tool_result", tool_use_id: message.tool_call_id };
  const text = textBlocks(message.content);
  if (text.length > 0) {
    result.content = typeof message.content === "string" ? message.content : text;
  }
  return result;
}

function assistantBlocks(message: AssistantMessage, i: number): RequestBlock[] {
  const blocks: RequestBlock[] = message.content === null ? [] : textBlocks(message.content);
  (message.tool_calls ?? []).forEach((call, j) => {
    blocks.push({
      type: "tool_use",
      id: call.id,
      name: call.function.name,
      input: toolInput(
        call.function.arguments,
        `messages[${i}].tool_calls[${j}].function.arguments`,
      ),
    });
  });
  return blocks;
}

function toolInput(args: string, param: string): Record<string, unknown> {
  if (args.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest(`${param} must be a JSON object encoded as a string.`, param);
  }
  return value as Record<string, unknown>;
}
