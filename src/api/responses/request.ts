/**
 * `POST /v1/responses` bodies (OpenAI's CreateResponse) read with the validation readers: every
 * failure is a 400 with the `param` it names (`input[2].content[0].image_url`). The options
 * become canonical ones; what the Responses object echoes back (instructions, tools, text,
 * reasoning...) is kept as sent; fields the gateway does not model pass in `extras` of protocol
 * `openai_responses` (a same-protocol upstream gets them, others drop and name them).
 */
import {
  defaultOptions,
  type Options,
  type OutputFormat,
  type ReasoningOptions,
  type ToolSpec,
} from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL, type Reader, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";
import { type NamedChoice, parseToolChoice } from "../shared/tool_choice.ts";
import { FUNCTION_NAME, type ToolNames, uniqueToolName } from "../shared/tool_names.ts";
import { customParameters, ToolMap, type WireTool } from "./tool_map.ts";

/** The `include` values OpenAI documents. */
export const INCLUDES = [
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "file_search_call.results",
  "web_search_call.action.sources",
  "web_search_call.results",
] as const;
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
const SUMMARIES = ["auto", "concise", "detailed"] as const;
const FORMATS = ["text", "json_object", "json_schema"] as const;
/** A named tool choice as the Responses API writes it. */
const NAMED_CHOICE: NamedChoice = {
  expected: '"none", "auto", "required" or {"type": "function", "name": \u2026}',
  holder: (choice) => choice,
};
const SCHEMA_NAME = {
  pattern: /^[A-Za-z0-9_-]{1,64}$/,
  format: "1 to 64 letters, digits, underscores or dashes",
} as const;
const RULES = {
  model: { nonEmpty: true },
  temperature: { optional: true, min: 0, max: 2 },
  topP: { optional: true, min: 0, max: 1 },
  tokens: { optional: true, min: 1 },
  tools: { optional: true, maxItems: 128 },
  metadataValue: { maxLength: 512 },
} as const;

/** The parts of a body the route needs besides the canonical options. */
export interface ResponsesRequest {
  model: string;
  /** `input`'s reader, read once the previous response's history is known. */
  input: Reader;
  instructions: string | null;
  options: Options;
  stream: boolean;
  store: boolean;
  previousResponseId: string | null;
  /** Whether reasoning items carry `encrypted_content`. */
  includeEncrypted: boolean;
  /** Hosted tools (`web_search`...) by their `tools[i].type` path: only an upstream with the
   * Responses API runs them; other back ends go without them (or refuse them: the model's
   * `hosted_tools`). */
  hostedTools: { path: string; type: string }[];
  /** The canonical names of the function, custom and namespaced tools (tool_map.ts). */
  tools: ToolMap;
  /** What the Response object echoes. */
  echo: ResponseEcho;
  /** Fields the gateway does not model, as sent. */
  extras: Record<string, unknown>;
}

/** The request fields a Response object repeats, as OpenAI writes them. */
export interface ResponseEcho {
  instructions: string | null;
  tools: Record<string, unknown>[];
  tool_choice: unknown;
  temperature: number;
  top_p: number;
  max_output_tokens: number | null;
  parallel_tool_calls: boolean;
  reasoning: { effort: string | null; summary: string | null };
  text: { format: Record<string, unknown> };
  metadata: Record<string, string>;
  truncation: "auto" | "disabled";
  user: string | null;
}

/** Checks a parsed JSON body; `input` is left to {@link parseInput}. */
export function parseResponsesRequest(body: Record<string, unknown>): ResponsesRequest {
  const f = readRequest(body);
  const model = f.string("model", RULES.model);
  const input = f.get("input");
  if (input.value === undefined || input.value === null) throw input.missing();
  const instructions = f.string("instructions", OPTIONAL) ?? null;
  const options = defaultOptions();
  const maxTokens = f.integer("max_output_tokens", RULES.tokens);
  if (maxTokens !== undefined) {
    options.maxTokens = maxTokens;
    options.maxTokensGiven = true;
  }
  const temperature = f.number("temperature", RULES.temperature);
  if (temperature !== undefined) options.temperature = temperature;
  const topP = f.number("top_p", RULES.topP);
  if (topP !== undefined) options.topP = topP;
  const parallel = f.boolean("parallel_tool_calls", OPTIONAL);
  if (parallel !== undefined) options.parallelToolCalls = parallel;
  const user = f.string("user", OPTIONAL);
  if (user !== undefined) options.user = user;
  const metadata = parseMetadata(f.object("metadata", OPTIONAL));
  if (metadata !== undefined) options.metadata = metadata;

  const hostedTools: { path: string; type: string }[] = [];
  const tools = new ToolMap();
  const toolsSent = parseTools(f.array("tools", RULES.tools), options, hostedTools, tools);
  const choiceReader = f.optional("tool_choice");
  options.toolChoice = parseChoice(choiceReader, options, tools, hostedTools);
  const text = f.object("text", OPTIONAL);
  const format = text?.object("format", OPTIONAL);
  options.output = parseFormat(format);
  const verbosity = text?.oneOf("verbosity", ["low", "medium", "high"] as const, OPTIONAL);
  if (verbosity !== undefined) options.verbosity = verbosity;
  const reasoning = f.object("reasoning", OPTIONAL);
  const effort = reasoning?.oneOf("effort", EFFORTS, OPTIONAL);
  const summary = reasoning?.oneOf("summary", SUMMARIES, OPTIONAL) ??
    reasoning?.oneOf("generate_summary", SUMMARIES, OPTIONAL);
  const reasoningOptions = toReasoning(effort);
  if (reasoningOptions) options.reasoning = reasoningOptions;

  const include = f.array("include", OPTIONAL)?.map((i) => i.oneOf(INCLUDES)) ?? [];
  const stream = f.boolean("stream", OPTIONAL) ?? false;
  const streamOptions = f.object("stream_options", OPTIONAL);
  if (streamOptions !== undefined && !stream) {
    throw streamOptions.reader.invalid("only allowed when 'stream' is true");
  }
  streamOptions?.boolean("include_obfuscation", OPTIONAL);
  const store = f.boolean("store", OPTIONAL) ?? true;
  const previousResponseId = f.string("previous_response_id", { optional: true, nonEmpty: true }) ??
    null;
  if (previousResponseId === null && Array.isArray(input.value) && input.value.length === 0) {
    throw input.invalid(
      "expected at least 1 item, but got 0; only a previous_response_id may be continued without input",
    );
  }
  const truncation = f.oneOf("truncation", ["auto", "disabled"], OPTIONAL) ?? "disabled";
  const extras = f.extras();
  return {
    model,
    input,
    instructions,
    options,
    stream,
    store,
    previousResponseId,
    includeEncrypted: include.includes("reasoning.encrypted_content"),
    hostedTools,
    tools,
    echo: {
      instructions,
      tools: toolsSent,
      tool_choice: choiceReader?.value ?? "auto",
      temperature: temperature ?? 1,
      top_p: topP ?? 1,
      max_output_tokens: maxTokens ?? null,
      parallel_tool_calls: parallel ?? true,
      reasoning: { effort: effort ?? null, summary: summary ?? null },
      text: { format: format?.value ?? { type: "text" } },
      metadata: metadata ?? {},
      truncation,
      user: user ?? null,
    },
    extras,
  };
}

/** OpenAI's efforts as canonical ones: `none` turns reasoning off, `xhigh` is the highest. */
function toReasoning(effort: (typeof EFFORTS)[number] | undefined): ReasoningOptions | undefined {
  if (effort === undefined) return undefined;
  if (effort === "none") return { disabled: true };
  return { effort: effort === "xhigh" ? "high" : effort };
}

/** A function or custom tool read, before its canonical name is known. */
interface PendingTool {
  wire: WireTool;
  spec: Omit<ToolSpec, "name">;
}

/**
 * `tools`: function tools (unique names) become canonical tools; `custom` tools become
 * functions of one string (`input`); the function and custom tools of a `namespace` are
 * flattened into canonical tools under names `tools` maps (tool_map.ts); other tool types are
 * hosted tools, kept for an upstream with the Responses API and their paths noted. Returns the
 * tools as the Response object echoes them.
 */
function parseTools(
  items: Reader[] | undefined,
  options: Options,
  hosted: { path: string; type: string }[],
  tools: ToolMap,
): Record<string, unknown>[] {
  if (items === undefined) return [];
  const names: ToolNames = new Map();
  const namespaces: ToolNames = new Map();
  const top: PendingTool[] = [];
  const nested: PendingTool[] = [];
  const echo = items.map((item, i) => {
    const t = item.object();
    const type = t.string("type", { nonEmpty: true });
    if (type === "function" || type === "custom") {
      const name = uniqueToolName(t, names, i);
      const { pending, echoed } = readTool(t, type, name);
      top.push(pending);
      return echoed;
    }
    if (type === "namespace") {
      const namespace = uniqueToolName(t, namespaces, i);
      t.string("description", OPTIONAL);
      const inner: ToolNames = new Map();
      t.array("tools", { minItems: 1 }).forEach((member, j) => {
        const m = member.object();
        const kind = m.oneOf("type", ["function", "custom"] as const);
        const name = uniqueToolName(m, inner, j);
        const { pending } = readTool(m, kind, name);
        pending.wire.namespace = namespace;
        nested.push(pending);
      });
      return t.value;
    }
    hosted.push({ path: t.get("type").path, type });
    return t.value;
  });
  for (const { wire, spec } of [...top, ...nested]) {
    options.tools.push({ name: tools.add(wire), ...spec });
  }
  return echo;
}

/** A `function` or `custom` tool's canonical spec and its echo. */
function readTool(
  t: Fields,
  kind: "function" | "custom",
  name: string,
): { pending: PendingTool; echoed: Record<string, unknown> } {
  const description = t.string("description", OPTIONAL);
  if (kind === "custom") {
    const format = t.object("format", OPTIONAL);
    const type = format?.oneOf("type", ["text", "grammar"] as const, OPTIONAL) ?? "text";
    let about = "The tool's input: free-form text.";
    if (type === "grammar") {
      const syntax = format!.oneOf("syntax", ["lark", "regex"] as const);
      const definition = format!.string("definition");
      about = `The tool's input: text in the ${syntax} grammar below.\n${definition}`;
    }
    const spec: Omit<ToolSpec, "name"> = { parameters: customParameters(about) };
    if (description !== undefined) spec.description = description;
    return { pending: { wire: { kind, name }, spec }, echoed: t.value };
  }
  const spec: Omit<ToolSpec, "name"> = {};
  if (description !== undefined) spec.description = description;
  const parameters = t.optional("parameters");
  if (parameters !== undefined) {
    const schema = parameters.nullAsValue().object({ expected: "a JSON schema object" });
    schema.oneOf("type", ["object"], OPTIONAL);
    spec.parameters = schema.value;
  }
  const strict = t.boolean("strict", OPTIONAL);
  if (strict !== undefined) spec.strict = strict;
  return {
    pending: { wire: { kind, name }, spec },
    echoed: {
      type: "function",
      name,
      description: description ?? null,
      parameters: spec.parameters ?? null,
      strict: strict ?? null,
    },
  };
}

/** `tool_choice`: as chat completions reads it, and the Responses API's own forms: a custom
 * tool (`{"type": "custom", "name"}`), a namespaced function (`namespace` beside the name), or
 * a hosted tool (which leaves the choice to the model where the hosted tool is dropped). */
function parseChoice(
  r: Reader | undefined,
  options: Options,
  tools: ToolMap,
  hosted: readonly { path: string; type: string }[],
): Options["toolChoice"] {
  if (r === undefined || typeof r.value === "string") {
    return parseToolChoice(r, options.tools, NAMED_CHOICE);
  }
  const choice = r.object({ expected: NAMED_CHOICE.expected });
  const type = choice.string("type", { nonEmpty: true });
  if (type !== "function" && type !== "custom") {
    if (hosted.some((h) => h.type === type)) return "auto";
    return parseToolChoice(r, options.tools, NAMED_CHOICE);
  }
  const name = choice.string("name", FUNCTION_NAME);
  const namespace = choice.string("namespace", { optional: true, ...FUNCTION_NAME });
  const canonical = tools.canonical(name, namespace);
  const wire = tools.wire(canonical);
  if (!options.tools.some((t) => t.name === canonical) || wire.kind !== type) {
    throw choice.get("name").invalid(
      `expected the name of one of the ${type} tools, but got ${quote(name)}`,
    );
  }
  return { name: canonical };
}

/** `text.format`: `text`, `json_object` or `json_schema` ({name, schema, strict?,
 * description?} beside the type). */
function parseFormat(format: Fields | undefined): OutputFormat {
  if (format === undefined) return { type: "text" };
  const type = format.oneOf("type", FORMATS);
  if (type === "text") return { type: "text" };
  if (type === "json_object") return { type: "json" };
  const output: OutputFormat = {
    type: "json_schema",
    name: format.string("name", SCHEMA_NAME),
    schema: format.get("schema").nullAsValue().object({ expected: "a JSON schema object" }).value,
    strict: format.boolean("strict", OPTIONAL) ?? false,
  };
  const description = format.string("description", OPTIONAL);
  if (description !== undefined) output.description = description;
  return output;
}

/** `metadata`: up to 16 string values under keys of up to 64 characters (OpenAI's limits). */
function parseMetadata(f: Fields | undefined): Record<string, string> | undefined {
  if (f === undefined) return undefined;
  const entries = f.entries();
  if (entries.length > 16) {
    throw f.reader.invalid(`expected at most ${count(16, "pair")}, but got ${entries.length}`);
  }
  return Object.fromEntries(entries.map(([key, value]) => {
    if (key.length > 64) throw value.invalid("expected a key of at most 64 characters");
    return [key, value.string(RULES.metadataValue)];
  }));
}
