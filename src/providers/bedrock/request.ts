/** The body of a Converse (or ConverseStream) request, from a canonical request. */
import type { CanonicalRequest, Options, ToolSpec } from "../../canonical/conversation.ts";
import { dropLacking, type DroppableOption } from "../dropped_options.ts";
import { anthropicModelTraits } from "../anthropic/model.ts";
import { toAnthropicSampling } from "../anthropic/sampling.ts";
import { toAnthropicThinking, wantsThinking } from "../anthropic/thinking.ts";
import { cachePoint, toConverseConversation, toolBlocksAsText } from "./messages.ts";
import type {
  CachePoint,
  ConverseMessage,
  ConverseRequest,
  ToolChoice,
  ToolSpecBlock,
} from "./types.ts";

/** Whether a Bedrock model id (or inference profile) is one of Anthropic's Claude models:
 * `anthropic.claude-...`, `us.anthropic.claude-...`, an ARN naming one. */
export function isClaude(modelId: string): boolean {
  return /(?:^|[.:/])anthropic\.claude/.test(modelId);
}

/** A Converse request, and what reading its answer needs to know. */
export interface ConverseCall {
  body: ConverseRequest;
  /** The forced tool whose input is the answer's JSON text (see {@link toConverseRequest}). */
  jsonTool: string | null;
}

/** The name of the tool whose input is a JSON answer (with a suffix when a caller's tool
 * already has it). */
const JSON_TOOL = "json_output";

/**
 * The Converse body for a canonical request to `modelId`: the conversation
 * (`toConverseConversation`); `inferenceConfig` with `maxTokens` always, `temperature`,
 * `topP`, `stopSequences`; `toolConfig` with the tools (a cache point after a marked one) and
 * the choice (`auto` / `any` / `tool`), or, when no tools are offered (or `none` is chosen),
 * the conversation's tool calls and results as text (`toolBlocksAsText`). For Claude models, sampling follows Anthropic's rules
 * (temperature clamped to 0-1, none with thinking), `top_k` and thinking (`thinking` with a
 * budget, or adaptive with `output_config.effort`, as Anthropic's Messages API takes them) go
 * in `additionalModelRequestFields`. A JSON answer (`response_format`) is the input of a tool
 * `json_output` the model must call (the only one when the caller has no tools or chose
 * `none`, else one it may call instead of the caller's), as on Anthropic's models without
 * structured outputs; with a caller's tool required it cannot be asked for and is dropped. What
 * Converse cannot honour is added to `dropped` by its wire name.
 *
 * Thinking is left off (its option dropped) for models that do not think the Claude way, with a
 * forced tool choice, and mid tool loop when the calls' turn has no reasoning to continue.
 */
export function toConverseRequest(
  req: CanonicalRequest,
  modelId: string,
  dropped: Set<string>,
): ConverseCall {
  const options = req.options;
  const claude = isClaude(modelId);
  const traits = anthropicModelTraits(modelId);
  const { system, messages } = toConverseConversation(req.messages, dropped);
  const body: ConverseRequest = { messages, inferenceConfig: { maxTokens: options.maxTokens } };
  if (system.length > 0) body.system = system;
  if (options.stop.length > 0) body.inferenceConfig.stopSequences = [...options.stop];

  const tools = toConverseTools(options, dropped);
  if (tools === undefined) body.messages = toolBlocksAsText(messages);
  const { toolConfig, jsonTool } = withJsonOutput(options, tools, dropped);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  const forced = toolConfig?.toolChoice !== undefined && !("auto" in toolConfig.toolChoice);

  const extra: Record<string, unknown> = {};
  const reasoning = options.reasoning;
  if (reasoning !== undefined && wantsThinking(reasoning)) {
    if (!claude || traits.thinking === "none" || forced || !reasoningCanContinue(body.messages)) {
      dropped.add(reasoning.effort !== undefined ? "reasoning_effort" : "thinking");
    } else {
      const thinking = toAnthropicThinking(reasoning, traits.thinking, options.maxTokens);
      extra.thinking = thinking.thinking;
      body.inferenceConfig.maxTokens = thinking.maxTokens;
      if (thinking.effort !== undefined) extra.output_config = { effort: thinking.effort };
    }
  }
  if (claude) {
    const sampling = toAnthropicSampling(
      options,
      { thinking: extra.thinking !== undefined, fixedSampling: traits.fixedSampling },
      dropped,
    );
    if (sampling.temperature !== undefined) body.inferenceConfig.temperature = sampling.temperature;
    if (sampling.top_p !== undefined) body.inferenceConfig.topP = sampling.top_p;
    if (sampling.top_k !== undefined) extra.top_k = sampling.top_k;
  } else {
    if (options.temperature !== undefined) body.inferenceConfig.temperature = options.temperature;
    if (options.topP !== undefined) body.inferenceConfig.topP = options.topP;
    if (options.topK !== undefined) dropped.add("top_k");
  }
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  dropLacking(options, LACKING, dropped);
  for (const name of Object.keys(req.extras.fields)) dropped.add(name);
  return { body, jsonTool };
}

/** The tool config once the answer's JSON form is asked for (see {@link toConverseRequest}). */
function withJsonOutput(
  options: Options,
  toolConfig: ConverseRequest["toolConfig"],
  dropped: Set<string>,
): { toolConfig: ConverseRequest["toolConfig"]; jsonTool: string | null } {
  const output = options.output;
  if (output.type === "text") return { toolConfig, jsonTool: null };
  const choice = options.toolChoice;
  if (choice === "required" || (choice !== null && typeof choice === "object")) {
    dropped.add("response_format");
    return { toolConfig, jsonTool: null };
  }
  const tools = toolConfig?.tools ?? [];
  const taken = new Set(tools.flatMap((t) => "toolSpec" in t ? [t.toolSpec.name] : []));
  let name = JSON_TOOL;
  for (let n = 2; taken.has(name); n++) name = `${JSON_TOOL}_${n}`;
  const described = output.type === "json_schema"
    ? `a JSON object matching the schema "${output.name}".${
      output.description ? ` ${output.description}` : ""
    }`
    : "a JSON object.";
  if (output.type === "json_schema" && output.strict) dropped.add("strict");
  const spec: ToolSpecBlock = {
    toolSpec: {
      name,
      description: `Give your answer as this tool's input: ${described}`,
      inputSchema: {
        json: { type: "object", ...(output.type === "json_schema" ? output.schema : {}) },
      },
    },
  };
  const only = toolConfig === undefined;
  return {
    toolConfig: {
      tools: [...tools, spec],
      toolChoice: only ? { tool: { name } } : { any: {} },
    },
    jsonTool: name,
  };
}

/** The tools and tool choice; none with `tool_choice: "none"` (Converse has no such choice:
 * the model cannot call what it is not offered). */
function toConverseTools(options: Options, dropped: Set<string>): ConverseRequest["toolConfig"] {
  const choice = options.toolChoice;
  if (options.tools.length === 0 || choice === "none") return undefined;
  if (options.parallelToolCalls === false) dropped.add("parallel_tool_calls");
  const tools: (ToolSpecBlock | CachePoint)[] = [];
  for (const tool of options.tools) {
    tools.push(toolSpec(tool, dropped));
    if (tool.cache !== undefined) tools.push(cachePoint(tool.cache));
  }
  const toolChoice: ToolChoice | null = choice === "required"
    ? { any: {} }
    : choice !== null && typeof choice === "object"
    ? { tool: { name: choice.name } }
    : choice === "auto"
    ? { auto: {} }
    : null;
  return toolChoice === null ? { tools } : { tools, toolChoice };
}

function toolSpec(tool: ToolSpec, dropped: Set<string>): ToolSpecBlock {
  if (tool.strict === true) dropped.add("strict");
  const spec: ToolSpecBlock["toolSpec"] = {
    name: tool.name,
    inputSchema: { json: { type: "object", properties: {}, ...tool.parameters } },
  };
  if (tool.description !== undefined && tool.description !== "") {
    spec.description = tool.description;
  }
  return { toolSpec: spec };
}

/** Whether thinking may be on: mid tool loop (the last user turn holds tool results) Claude
 * wants the calls' turn to start with its reasoning. */
function reasoningCanContinue(messages: readonly ConverseMessage[]): boolean {
  const [calls, results] = messages.slice(-2);
  if (calls?.role !== "assistant" || results?.role !== "user") return true;
  if (!results.content.some((b) => "toolResult" in b)) return true;
  const first = calls.content[0];
  return first !== undefined && "reasoningContent" in first;
}

/** The options Converse has no field for. */
const LACKING: readonly DroppableOption[] = [
  "seed",
  "frequencyPenalty",
  "presencePenalty",
  "metadata",
  "user",
  "verbosity",
];
