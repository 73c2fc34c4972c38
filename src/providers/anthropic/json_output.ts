import type { OutputFormat, ToolChoice } from "../../canonical/conversation.ts";
import type {
  OutputConfig,
  Tool,
  ToolChoice as AnthropicToolChoice,
} from "../../types/anthropic.ts";
import { toAnthropicStrictSchema } from "./strict_schema.ts";

/** The name of the tool whose input is a JSON answer (with a suffix when a caller's tool
 * already has it). */
const JSON_TOOL = "json_output";

/** The tools, choice and output format of a request once its answer format is applied. */
export interface AnthropicJsonOutput {
  tools: Tool[];
  choice: AnthropicToolChoice | null;
  format?: NonNullable<OutputConfig["format"]>;
  /** The forced tool whose input is the answer: its `tool_use` comes back as text. */
  jsonTool: string | null;
}

/**
 * How a JSON answer is asked for. A JSON schema on a model with structured outputs becomes
 * `output_config.format` (the schema made acceptable to it). Otherwise (JSON without a schema,
 * which Anthropic has no mode for, or a model without structured outputs) the answer is the
 * input of a tool `json_output` the model must call: the only tool it may call when the caller
 * has none or chose `none` (`tool_choice: {type: "tool"}`), else one it may call instead of the
 * caller's (`any`). When the caller requires one of its own tools the answer is a call and
 * nothing is added.
 */
export function toAnthropicJsonOutput(
  output: OutputFormat,
  structuredOutputs: boolean,
  tools: Tool[],
  choice: AnthropicToolChoice | null,
  callerChoice: ToolChoice | null,
): AnthropicJsonOutput {
  const unchanged = { tools, choice, jsonTool: null };
  if (output.type === "text") return unchanged;
  if (output.type === "json_schema" && structuredOutputs) {
    return {
      ...unchanged,
      format: { type: "json_schema", schema: toAnthropicStrictSchema(output.schema) },
    };
  }
  if (callerChoice === "required" || (callerChoice !== null && typeof callerChoice === "object")) {
    return unchanged;
  }
  const name = freeName(tools);
  const described = output.type === "json_schema"
    ? `a JSON object matching the schema "${output.name}".${
      output.description ? ` ${output.description}` : ""
    }`
    : "a JSON object.";
  const jsonTool: Tool = {
    name,
    description: `Give your answer as this tool's input: ${described}`,
    input_schema: { type: "object", ...(output.type === "json_schema" ? output.schema : {}) },
  };
  const only = tools.length === 0 || callerChoice === "none";
  const forced: AnthropicToolChoice = only ? { type: "tool", name } : { type: "any" };
  if (!only && choice?.type === "auto" && choice.disable_parallel_tool_use) {
    forced.disable_parallel_tool_use = true;
  }
  return { tools: [...tools, jsonTool], choice: forced, jsonTool: name };
}

function freeName(tools: readonly Tool[]): string {
  const taken = new Set(tools.map((t) => t.name));
  let name = JSON_TOOL;
  for (let n = 2; taken.has(name); n++) name = `${JSON_TOOL}_${n}`;
  return name;
}
