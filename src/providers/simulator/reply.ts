/**
 * What the simulator answers, decided from the conversation alone (so the same request always
 * gets the same answer): tool calls when asked for or when the last user message names tools,
 * an answer built on the tool results after a tool round trip, else a reply that quotes the
 * last user message and describes its images.
 */
import { parseImageDataUrl, UNCAPPED } from "../../http/image_data_url.ts";
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ImagePart,
  Tool,
  ToolCall,
} from "../../types/openai.ts";
import { contentText } from "../content_text.ts";
import { fnv1a, stableId } from "./hash.ts";
import { SchemaSampler } from "./schema_sample.ts";

/** The simulator's decision: a text reply, or calls of the request's tools. */
export type Reply =
  | { kind: "text"; text: string }
  | { kind: "tool_calls"; calls: ToolCall[] };

const OPENERS = [
  "Hello! ",
  "Thanks for your message. ",
  "Sure. ",
  "Good question. ",
  "Here is my reply. ",
];

/** The reply to a request made to the simulated model `modelId`. */
export function planReply(req: ChatRequest, modelId: string): Reply {
  const messages = req.messages;
  const userIndex = findLast(messages, (m) => m.role === "user");
  const user = userIndex >= 0 ? messages[userIndex]! : undefined;
  const userText = user ? contentText(user.content) : "";
  const key = conversationKey(messages);

  const calls = chooseTools(req, userText);
  if (calls.length > 0) {
    const sampler = new SchemaSampler(userText);
    return {
      kind: "tool_calls",
      calls: calls.map((tool, i) => ({
        id: `call_${stableId(`${key}#${i}`)}`,
        type: "function",
        function: {
          name: tool.function.name,
          arguments: JSON.stringify(
            sampler.sampleArguments(
              tool.function.parameters,
              `tools[${req.tools.indexOf(tool)}].function.parameters`,
            ),
          ),
        },
      })),
    };
  }

  let text = OPENERS[fnv1a(key) % OPENERS.length]!;
  const results = toolResults(messages);
  if (results.length > 0) {
    text += results.map((r) => `The ${r.name} tool returned ${r.content}.`).join(" ");
    if (userText !== "") text += ` That answers your request: "${userText}".`;
  } else {
    text += `I am ${modelId}, a model simulated by Switchyard.`;
    if (userText !== "") text += ` You said: "${userText}".`;
    if (user) text += describeImages(user.content);
    text += ` This conversation has ${messages.length} message${plural(messages.length)}.`;
  }
  return { kind: "text", text: formatted(req, text, userText) };
}

/** The reply as JSON when `response_format` asks for it (a 400 when its schema costs more than
 * the sampler's budget). */
function formatted(req: ChatRequest, text: string, userText: string): string {
  const format = req.extra.response_format as
    | { type: string; json_schema?: { schema?: Record<string, unknown> } }
    | undefined;
  if (format?.type === "json_object") return JSON.stringify({ reply: text });
  if (format?.type === "json_schema") {
    const schema = format.json_schema?.schema;
    if (!schema) return JSON.stringify({ reply: text });
    const sampler = new SchemaSampler(userText);
    return JSON.stringify(sampler.sampleValue(schema, "response_format.json_schema.schema"));
  }
  return text;
}

/** The tools to call: the named one, or those the last user message names (with `required`,
 * the first tool when it names none). After tool results, only a forced choice calls again. */
function chooseTools(req: ChatRequest, userText: string): Tool[] {
  const { tools, tool_choice: choice } = req;
  if (tools.length === 0 || choice === "none") return [];
  if (typeof choice === "object" && choice !== null) {
    return tools.filter((t) => t.function.name === choice.function.name);
  }
  const afterTools = req.messages[req.messages.length - 1]?.role === "tool";
  if (afterTools && choice !== "required") return [];
  let named = namedTools(tools, userText);
  if (named.length === 0 && choice === "required") named = [tools[0]!];
  return req.extra.parallel_tool_calls === false ? named.slice(0, 1) : named;
}

/** The tools whose names appear as whole words in the text, in order of appearance: one pass
 * over the text's runs of name characters (a scan per tool was quadratic in long texts). */
function namedTools(tools: Tool[], text: string): Tool[] {
  const byName = new Map(tools.map((tool) => [tool.function.name, tool]));
  const found = new Set<Tool>();
  const isNameChar = (code: number) =>
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ||
    code === 95 || code === 45;
  for (let i = 0; i < text.length && found.size < byName.size;) {
    if (!isNameChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < text.length && isNameChar(text.charCodeAt(end))) end++;
    const tool = end - i <= 64 ? byName.get(text.slice(i, end)) : undefined;
    if (tool) found.add(tool);
    i = end;
  }
  return [...found];
}

/** The tool messages at the end of the conversation, with the names of the calls they answer. */
function toolResults(messages: ChatMessage[]): { name: string; content: string }[] {
  const out: { name: string; content: string }[] = [];
  let i = messages.length - 1;
  for (; i >= 0 && messages[i]!.role === "tool"; i--);
  const assistant = messages[i];
  if (assistant?.role !== "assistant" || !assistant.tool_calls) return out;
  for (let j = i + 1; j < messages.length; j++) {
    const message = messages[j]!;
    if (message.role !== "tool") continue;
    const call = assistant.tool_calls.find((c) => c.id === message.tool_call_id);
    out.push({ name: call?.function.name ?? "unknown", content: contentText(message.content) });
  }
  return out;
}

function describeImages(content: ChatMessage["content"]): string {
  if (!Array.isArray(content)) return "";
  const images = (content as ContentPart[]).filter((p): p is ImagePart => p.type === "image_url");
  if (images.length === 0) return "";
  const parts = images.map((part, i) => {
    const info = parseImageDataUrl(part.image_url.url, "image", UNCAPPED);
    return `image ${i + 1} is a ${info.format.toUpperCase()} of ${
      info.bytes.toLocaleString("en-US")
    } bytes, ${info.width} × ${info.height} pixels`;
  });
  return ` You sent ${images.length} image${plural(images.length)}: ${parts.join("; ")}.`;
}

/** A string that identifies the conversation (for choosing variations and call ids). */
function conversationKey(messages: ChatMessage[]): string {
  let key = "";
  for (const m of messages) {
    key += `${m.role}:${contentText(m.content)}\n`;
    if (m.role === "assistant" && m.tool_calls) {
      for (const c of m.tool_calls) key += `${c.id}:${c.function.name}:${c.function.arguments}\n`;
    }
    if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (p.type === "image_url") key += `image:${p.image_url.url.length}\n`;
      }
    }
  }
  return key;
}

function findLast<T>(list: T[], test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return i;
  return -1;
}

function plural(n: number): string {
  return n === 1 ? "" : "s";
}
