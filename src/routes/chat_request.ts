/**
 * Validation of `POST /v1/chat/completions` bodies (spec §2.3, §2.4, §4.2): every field is
 * checked, every failure is a 400 `invalid_request_error` whose `param` names the field
 * (`messages[2].content[0].image_url.url`). Unknown top-level fields are ignored, as OpenAI does.
 */
import { invalidRequest } from "../errors.ts";
import { quote } from "../quote.ts";
import { DEFAULT_IMAGE_CAPS } from "../config.ts";
import { type ImageCaps, type ImageField, parseRequestImages } from "../http/image_data_url.ts";
import type {
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ContentPart,
  ImagePart,
  JsonSchema,
  SystemMessage,
  TextPart,
  Tool,
  ToolCall,
  ToolChoice,
  UserMessage,
} from "../types/openai.ts";

/** Default `max_tokens` (spec §4.2). */
export const DEFAULT_MAX_TOKENS = 256;
/** Default `temperature` (spec §4.2). */
export const DEFAULT_TEMPERATURE = 1;
/** OpenAI's limits on stop sequences and tools. */
export const MAX_STOP_SEQUENCES = 4;
export const MAX_TOOLS = 128;

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

type Obj = Record<string, unknown>;

/** Checks a parsed JSON body (its images within `caps`) and returns the request with defaults
 * filled in. */
export function parseChatRequest(
  body: Obj,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ChatRequest {
  const model = body.model;
  if (model === undefined || model === null) {
    throw invalidRequest("You must provide a model parameter (`model`).", "model");
  }
  if (typeof model !== "string" || model === "") {
    throw invalidRequest(`\`model\` must be a non-empty string, not ${kindOf(model)}.`, "model");
  }
  const messages = parseMessages(body.messages);
  parseRequestImages(imageFields(messages), caps);

  const temperature = optionalNumber(body, "temperature", 0, 2);
  const maxTokens = parseMaxTokens(body);
  const stream = optionalBoolean(body, "stream") ?? false;
  const tools = parseTools(body.tools);

  const request: ChatRequest = {
    model,
    messages,
    temperature: temperature ?? DEFAULT_TEMPERATURE,
    max_tokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    stream,
    include_usage: parseStreamOptions(body.stream_options, stream),
    stop: parseStop(body.stop),
    tools,
    tool_choice: parseToolChoice(body.tool_choice, tools),
    max_tokens_given: maxTokens !== null,
    temperature_given: temperature !== null,
    extra: parseExtra(body),
  };
  const n = body.n;
  if (n !== undefined && n !== null && n !== 1) {
    throw invalidRequest(
      `Only one choice per request is supported: \`n\` must be 1, not ${quote(n)}.`,
      "n",
    );
  }
  return request;
}

function parseMessages(value: unknown): ChatMessage[] {
  if (value === undefined || value === null) {
    throw invalidRequest(
      "You must provide `messages`: a non-empty array of chat messages.",
      "messages",
    );
  }
  if (!Array.isArray(value)) {
    throw invalidRequest(
      `\`messages\` must be an array of chat messages, not ${kindOf(value)}.`,
      "messages",
    );
  }
  if (value.length === 0) {
    throw invalidRequest("`messages` must contain at least one message.", "messages");
  }
  const pairing = new ToolCallPairing();
  const messages = value.map((raw, i) => {
    const message = parseMessage(raw, `messages[${i}]`);
    pairing.add(message, i);
    return message;
  });
  pairing.end();
  return messages;
}

function parseMessage(raw: unknown, path: string): ChatMessage {
  if (!isObject(raw)) {
    throw invalidRequest(
      `\`${path}\` must be an object with \`role\` and \`content\`, not ${kindOf(raw)}.`,
      path,
    );
  }
  const role = raw.role;
  switch (role) {
    case "system":
    case "developer": {
      const content = parseContent(raw.content, `${path}.content`, "text", role);
      return withName<SystemMessage>({ role, content }, raw, path);
    }
    case "user": {
      const content = parseContent(raw.content, `${path}.content`, "image", role);
      return withName<UserMessage>({ role, content }, raw, path);
    }
    case "assistant":
      return parseAssistant(raw, path);
    case "tool": {
      const content = parseContent(raw.content, `${path}.content`, "text", role);
      const id = raw.tool_call_id;
      if (typeof id !== "string" || id === "") {
        throw invalidRequest(
          `\`${path}.tool_call_id\` must be the id of the tool call this message answers${
            id === undefined ? " (it is missing)" : `, not ${kindOf(id)}`
          }.`,
          `${path}.tool_call_id`,
        );
      }
      return { role, content, tool_call_id: id };
    }
    default:
      throw invalidRequest(
        `\`${path}.role\` must be one of ${ROLES.map((r) => `"${r}"`).join(", ")}${
          role === undefined ? " (it is missing)" : `, not ${quote(role)}`
        }.`,
        `${path}.role`,
      );
  }
}

function withName<M extends { name?: string }>(message: M, raw: Obj, path: string): M {
  const name = raw.name;
  if (name === undefined || name === null) return message;
  if (typeof name !== "string") {
    throw invalidRequest(`\`${path}.name\` must be a string, not ${kindOf(name)}.`, `${path}.name`);
  }
  message.name = name;
  return message;
}

function parseAssistant(raw: Obj, path: string): AssistantMessage {
  const toolCalls = raw.tool_calls === undefined || raw.tool_calls === null
    ? []
    : parseToolCalls(raw.tool_calls, `${path}.tool_calls`);
  let content: AssistantMessage["content"] = null;
  if (raw.content !== undefined && raw.content !== null) {
    content = parseContent(raw.content, `${path}.content`, "text", "assistant");
  } else if (toolCalls.length === 0) {
    throw invalidRequest(
      `\`${path}.content\` is required unless the assistant message has \`tool_calls\`.`,
      `${path}.content`,
    );
  }
  const message: AssistantMessage = { role: "assistant", content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return withName(message, raw, path);
}

function parseToolCalls(value: unknown, path: string): ToolCall[] {
  if (!Array.isArray(value)) {
    throw invalidRequest(`\`${path}\` must be an array of tool calls, not ${kindOf(value)}.`, path);
  }
  const seen = new Set<string>();
  return value.map((raw, j) => {
    const at = `${path}[${j}]`;
    if (!isObject(raw)) {
      throw invalidRequest(`\`${at}\` must be a tool call object, not ${kindOf(raw)}.`, at);
    }
    if (typeof raw.id !== "string" || raw.id === "") {
      throw invalidRequest(
        `\`${at}.id\` must be a non-empty string, not ${kindOf(raw.id)}.`,
        `${at}.id`,
      );
    }
    if (seen.has(raw.id)) {
      throw invalidRequest(
        `\`${at}.id\` repeats the id ${quote(raw.id)}; tool call ids must be unique.`,
        `${at}.id`,
      );
    }
    seen.add(raw.id);
    expectFunctionType(raw.type, `${at}.type`);
    const fn = raw.function;
    if (!isObject(fn)) {
      throw invalidRequest(
        `\`${at}.function\` must be an object with \`name\` and \`arguments\`, not ${kindOf(fn)}.`,
        `${at}.function`,
      );
    }
    const name = functionName(fn.name, `${at}.function.name`);
    if (typeof fn.arguments !== "string") {
      throw invalidRequest(
        `\`${at}.function.arguments\` must be a string of JSON-encoded arguments, not ${
          kindOf(fn.arguments)
        }.`,
        `${at}.function.arguments`,
      );
    }
    return { id: raw.id, type: "function", function: { name, arguments: fn.arguments } };
  });
}

/** Tracks that every tool call is answered by a tool message, and that every tool message
 * answers a tool call of the assistant message before it (OpenAI's rule). */
class ToolCallPairing {
  #open: { path: string; ids: string[]; answered: Set<string> } | null = null;

  add(message: ChatMessage, index: number): void {
    const path = `messages[${index}]`;
    if (message.role === "tool") {
      const open = this.#open;
      const param = `${path}.tool_call_id`;
      if (open === null) {
        throw invalidRequest(
          `\`${path}\` is a tool message but does not follow an assistant message with \`tool_calls\`; a tool message must answer one of the tool calls of the assistant message before it.`,
          param,
        );
      }
      const id = message.tool_call_id;
      if (!open.ids.includes(id)) {
        throw invalidRequest(
          `\`${param}\` is ${
            quote(id)
          }, which is not the id of any tool call in ${open.path} (ids: ${
            open.ids.slice(0, 5).map((i) => quote(i)).join(", ") +
            (open.ids.length > 5 ? ", …" : "")
          }).`,
          param,
        );
      }
      if (open.answered.has(id)) {
        throw invalidRequest(
          `\`${param}\`: the tool call ${quote(id)} has already been answered.`,
          param,
        );
      }
      open.answered.add(id);
      return;
    }
    this.end();
    if (message.role === "assistant" && message.tool_calls) {
      this.#open = {
        path,
        ids: message.tool_calls.map((c) => c.id),
        answered: new Set(),
      };
    }
  }

  /** Checks that the last assistant message's tool calls were all answered. */
  end(): void {
    const open = this.#open;
    this.#open = null;
    if (open) {
      const j = open.ids.findIndex((id) => !open.answered.has(id));
      if (j >= 0) {
        const param = `${open.path}.tool_calls[${j}].id`;
        throw invalidRequest(
          `The tool call ${
            quote(open.ids[j])
          } (\`${param}\`) has no tool message answering it; an assistant message with \`tool_calls\` must be followed by one tool message per call.`,
          param,
        );
      }
    }
  }
}

function parseContent(
  value: unknown,
  path: string,
  parts: "text",
  role: string,
): string | TextPart[];
function parseContent(
  value: unknown,
  path: string,
  parts: "image",
  role: string,
): string | ContentPart[];
function parseContent(
  value: unknown,
  path: string,
  parts: "text" | "image",
  role: string,
): string | ContentPart[] {
  if (typeof value === "string") return value;
  const allowed = parts === "image" ? "text or image_url" : "text";
  if (value === undefined || value === null) {
    throw invalidRequest(
      `\`${path}\` is required: a string or an array of ${allowed} content parts.`,
      path,
    );
  }
  if (!Array.isArray(value)) {
    throw invalidRequest(
      `\`${path}\` must be a string or an array of ${allowed} content parts, not ${kindOf(value)}.`,
      path,
    );
  }
  if (value.length === 0) {
    throw invalidRequest(`\`${path}\` must not be an empty array.`, path);
  }
  return value.map((raw, j): ContentPart => {
    const at = `${path}[${j}]`;
    if (!isObject(raw)) {
      throw invalidRequest(
        `\`${at}\` must be a content part object with a \`type\`, not ${kindOf(raw)}.`,
        at,
      );
    }
    if (raw.type === "text") {
      if (typeof raw.text !== "string") {
        throw invalidRequest(
          `\`${at}.text\` must be a string, not ${kindOf(raw.text)}.`,
          `${at}.text`,
        );
      }
      return { type: "text", text: raw.text };
    }
    if (raw.type === "image_url" && parts === "image") return parseImagePart(raw, at);
    const why = raw.type === "image_url"
      ? `image_url parts are only allowed in user messages, not in ${role} messages`
      : `must be ${parts === "image" ? `"text" or "image_url"` : `"text"`}${
        raw.type === undefined ? " (it is missing)" : `, not ${quote(raw.type)}`
      }`;
    throw invalidRequest(`\`${at}.type\`: ${why}.`, `${at}.type`);
  });
}

function parseImagePart(raw: Obj, at: string): ImagePart {
  const image = raw.image_url;
  if (!isObject(image)) {
    throw invalidRequest(
      `\`${at}.image_url\` must be an object with a \`url\` (a base64 image data URL), not ${
        kindOf(image)
      }.`,
      `${at}.image_url`,
    );
  }
  const url = `${at}.image_url.url`;
  if (typeof image.url !== "string") {
    throw invalidRequest(
      `\`${url}\` must be a string (a base64 image data URL), not ${kindOf(image.url)}.`,
      url,
    );
  }
  const part: ImagePart = { type: "image_url", image_url: { url: image.url } };
  const detail = image.detail;
  if (detail !== undefined && detail !== null) {
    if (detail !== "auto" && detail !== "low" && detail !== "high") {
      throw invalidRequest(
        `\`${at}.image_url.detail\` must be "auto", "low" or "high", not ${quote(detail)}.`,
        `${at}.image_url.detail`,
      );
    }
    part.image_url.detail = detail;
  }
  return part;
}

/** The image URLs of the user messages, each with its param: decoded and checked once the
 * messages are, so that the per-request caps see every image. */
function imageFields(messages: ChatMessage[]): ImageField[] {
  const fields: ImageField[] = [];
  messages.forEach((m, i) => {
    if (m.role !== "user" || typeof m.content === "string") return;
    m.content.forEach((part, j) => {
      if (part.type !== "image_url") return;
      fields.push({ url: part.image_url.url, param: `messages[${i}].content[${j}].image_url.url` });
    });
  });
  return fields;
}

function parseMaxTokens(body: Obj): number | null {
  const a = optionalInteger(body, "max_tokens", 1);
  const b = optionalInteger(body, "max_completion_tokens", 1);
  if (a !== null && b !== null && a !== b) {
    throw invalidRequest(
      `\`max_tokens\` (${a}) and \`max_completion_tokens\` (${b}) disagree; send one of them.`,
      "max_completion_tokens",
    );
  }
  return a ?? b;
}

function parseStreamOptions(value: unknown, stream: boolean): boolean {
  if (value === undefined || value === null) return false;
  if (!isObject(value)) {
    throw invalidRequest(
      `\`stream_options\` must be an object, not ${kindOf(value)}.`,
      "stream_options",
    );
  }
  if (!stream) {
    throw invalidRequest(
      "`stream_options` is only allowed when `stream` is true.",
      "stream_options",
    );
  }
  return optionalBoolean(value, "include_usage", "stream_options.") ?? false;
}

function parseStop(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list)) {
    throw invalidRequest(
      `\`stop\` must be a string or an array of up to ${MAX_STOP_SEQUENCES} strings, not ${
        kindOf(value)
      }.`,
      "stop",
    );
  }
  if (list.length > MAX_STOP_SEQUENCES) {
    throw invalidRequest(
      `\`stop\` may hold at most ${MAX_STOP_SEQUENCES} sequences, not ${list.length}.`,
      "stop",
    );
  }
  return list.map((s, i) => {
    const param = typeof value === "string" ? "stop" : `stop[${i}]`;
    if (typeof s !== "string") {
      throw invalidRequest(`\`${param}\` must be a string, not ${kindOf(s)}.`, param);
    }
    if (s === "") throw invalidRequest(`\`${param}\` must not be an empty string.`, param);
    return s;
  });
}

function parseTools(value: unknown): Tool[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw invalidRequest(`\`tools\` must be an array of tools, not ${kindOf(value)}.`, "tools");
  }
  if (value.length > MAX_TOOLS) {
    throw invalidRequest(
      `\`tools\` may hold at most ${MAX_TOOLS} tools, not ${value.length}.`,
      "tools",
    );
  }
  const names = new Map<string, number>();
  return value.map((raw, i): Tool => {
    const at = `tools[${i}]`;
    if (!isObject(raw)) {
      throw invalidRequest(
        `\`${at}\` must be an object {type: "function", function: {...}}, not ${kindOf(raw)}.`,
        at,
      );
    }
    expectFunctionType(raw.type, `${at}.type`);
    const fn = raw.function;
    if (!isObject(fn)) {
      throw invalidRequest(
        `\`${at}.function\` must be an object with at least a \`name\`, not ${kindOf(fn)}.`,
        `${at}.function`,
      );
    }
    const name = functionName(fn.name, `${at}.function.name`);
    const first = names.get(name);
    if (first !== undefined) {
      throw invalidRequest(
        `\`${at}.function.name\`: the name ${
          quote(name)
        } is already used by tools[${first}]; tool names must be unique.`,
        `${at}.function.name`,
      );
    }
    names.set(name, i);
    const tool: Tool = { type: "function", function: { name } };
    if (fn.description !== undefined && fn.description !== null) {
      if (typeof fn.description !== "string") {
        throw invalidRequest(
          `\`${at}.function.description\` must be a string, not ${kindOf(fn.description)}.`,
          `${at}.function.description`,
        );
      }
      tool.function.description = fn.description;
    }
    if (fn.parameters !== undefined && fn.parameters !== null) {
      tool.function.parameters = parseParameters(fn.parameters, `${at}.function.parameters`);
    }
    if (fn.strict !== undefined && fn.strict !== null) {
      if (typeof fn.strict !== "boolean") {
        throw invalidRequest(
          `\`${at}.function.strict\` must be true or false, not ${kindOf(fn.strict)}.`,
          `${at}.function.strict`,
        );
      }
      tool.function.strict = fn.strict;
    }
    return tool;
  });
}

function parseParameters(value: unknown, at: string): JsonSchema {
  if (!isObject(value)) {
    throw invalidRequest(
      `\`${at}\` must be a JSON schema object like {"type": "object", "properties": {...}}, not ${
        kindOf(value)
      }.`,
      at,
    );
  }
  if (value.type !== undefined && value.type !== "object") {
    throw invalidRequest(
      `\`${at}.type\` must be "object" (function arguments are a JSON object), not ${
        quote(value.type)
      }.`,
      `${at}.type`,
    );
  }
  if (value.properties !== undefined && !isObject(value.properties)) {
    throw invalidRequest(
      `\`${at}.properties\` must be an object mapping names to schemas, not ${
        kindOf(value.properties)
      }.`,
      `${at}.properties`,
    );
  }
  const required = value.required;
  if (
    required !== undefined &&
    (!Array.isArray(required) || required.some((r) => typeof r !== "string"))
  ) {
    throw invalidRequest(
      `\`${at}.required\` must be an array of property names.`,
      `${at}.required`,
    );
  }
  return value;
}

function parseToolChoice(value: unknown, tools: Tool[]): ToolChoice | null {
  if (value === undefined || value === null) return null;
  if (value === "none" || value === "auto") return value;
  if (value === "required") {
    if (tools.length === 0) {
      throw invalidRequest(
        '`tool_choice` "required" needs `tools`: no tools were given.',
        "tool_choice",
      );
    }
    return value;
  }
  if (!isObject(value)) {
    throw invalidRequest(
      `\`tool_choice\` must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}, not ${
        typeof value === "string" ? quote(value) : kindOf(value)
      }.`,
      "tool_choice",
    );
  }
  expectFunctionType(value.type, "tool_choice.type");
  const fn = value.function;
  if (!isObject(fn)) {
    throw invalidRequest(
      `\`tool_choice.function\` must be an object with a \`name\`, not ${kindOf(fn)}.`,
      "tool_choice.function",
    );
  }
  const name = functionName(fn.name, "tool_choice.function.name");
  if (!tools.some((t) => t.function.name === name)) {
    throw invalidRequest(
      `\`tool_choice.function.name\` is ${
        quote(name)
      }, which is not the name of any tool in \`tools\`.`,
      "tool_choice.function.name",
    );
  }
  return { type: "function", function: { name } };
}

/** OpenAI sampling fields passed through, type-checked, to OpenAI-style upstreams. */
function parseExtra(body: Obj): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== null) extra[key] = value;
  };
  put("top_p", optionalNumber(body, "top_p", 0, 1));
  put("presence_penalty", optionalNumber(body, "presence_penalty", -2, 2));
  put("frequency_penalty", optionalNumber(body, "frequency_penalty", -2, 2));
  put("seed", optionalInteger(body, "seed", Number.MIN_SAFE_INTEGER));
  put("parallel_tool_calls", optionalBoolean(body, "parallel_tool_calls"));
  if (body.user !== undefined && body.user !== null) {
    if (typeof body.user !== "string") {
      throw invalidRequest(`\`user\` must be a string, not ${kindOf(body.user)}.`, "user");
    }
    extra.user = body.user;
  }
  if (body.logit_bias !== undefined && body.logit_bias !== null) {
    extra.logit_bias = parseLogitBias(body.logit_bias);
  }
  if (body.response_format !== undefined && body.response_format !== null) {
    extra.response_format = parseResponseFormat(body.response_format);
  }
  return extra;
}

function parseLogitBias(value: unknown): Record<string, number> {
  if (!isObject(value)) {
    throw invalidRequest(
      `\`logit_bias\` must be an object mapping token ids to numbers, not ${kindOf(value)}.`,
      "logit_bias",
    );
  }
  for (const [token, bias] of Object.entries(value)) {
    const param = `logit_bias.${token}`;
    if (!/^\d+$/.test(token)) {
      throw invalidRequest(
        `\`logit_bias\` keys must be token ids, not ${quote(token)}.`,
        param,
      );
    }
    if (typeof bias !== "number" || !(bias >= -100 && bias <= 100)) {
      throw invalidRequest(`\`${param}\` must be a number from -100 to 100.`, param);
    }
  }
  return value as Record<string, number>;
}

function parseResponseFormat(value: unknown): Obj {
  if (!isObject(value)) {
    throw invalidRequest(
      `\`response_format\` must be an object like {"type": "json_object"}, not ${kindOf(value)}.`,
      "response_format",
    );
  }
  const type = value.type;
  if (type === "text" || type === "json_object") return { type };
  if (type !== "json_schema") {
    throw invalidRequest(
      `\`response_format.type\` must be "text", "json_object" or "json_schema", not ${
        type === undefined ? "missing" : quote(type)
      }.`,
      "response_format.type",
    );
  }
  const spec = value.json_schema;
  if (!isObject(spec)) {
    throw invalidRequest(
      "`response_format.json_schema` must be an object with a `name` and a `schema`.",
      "response_format.json_schema",
    );
  }
  if (typeof spec.name !== "string" || !FUNCTION_NAME.test(spec.name)) {
    throw invalidRequest(
      "`response_format.json_schema.name` must be a string of letters, digits, _ and - (at most 64).",
      "response_format.json_schema.name",
    );
  }
  if (spec.schema !== undefined && !isObject(spec.schema)) {
    throw invalidRequest(
      "`response_format.json_schema.schema` must be a JSON schema object.",
      "response_format.json_schema.schema",
    );
  }
  return { type, json_schema: spec };
}

function expectFunctionType(type: unknown, param: string): void {
  if (type !== "function") {
    throw invalidRequest(
      `\`${param}\` must be "function"${
        type === undefined ? " (it is missing)" : `, not ${quote(type)}`
      }.`,
      param,
    );
  }
}

function functionName(name: unknown, param: string): string {
  if (typeof name !== "string" || !FUNCTION_NAME.test(name)) {
    throw invalidRequest(
      `\`${param}\` must be 1 to 64 letters, digits, underscores or dashes, not ${
        typeof name === "string" ? quote(name) : kindOf(name)
      }.`,
      param,
    );
  }
  return name;
}

function optionalNumber(obj: Obj, key: string, min: number, max: number): number | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw invalidRequest(`\`${key}\` must be a number, not ${kindOf(v)}.`, key);
  }
  if (v < min || v > max) {
    throw invalidRequest(`\`${key}\` must be between ${min} and ${max}, not ${v}.`, key);
  }
  return v;
}

function optionalInteger(obj: Obj, key: string, min: number): number | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw invalidRequest(`\`${key}\` must be an integer, not ${kindOf(v)}.`, key);
  }
  if (v < min) {
    throw invalidRequest(
      min === 1
        ? `\`${key}\` must be a positive integer, not ${v}.`
        : `\`${key}\` must be at least ${min}, not ${v}.`,
      key,
    );
  }
  return v;
}

function optionalBoolean(obj: Obj, key: string, prefix = ""): boolean | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean") {
    throw invalidRequest(
      `\`${prefix}${key}\` must be true or false, not ${kindOf(v)}.`,
      prefix + key,
    );
  }
  return v;
}

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How a JSON value reads in an error message: `the string "x"`, `a number (3)`, `null`. */
function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${quote(value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value === "number" ? "the number" : "the boolean"} ${String(value)}`;
}
