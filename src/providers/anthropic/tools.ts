import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import type { Tool, ToolChoice as AnthropicToolChoice } from "../../types/anthropic.ts";
import { toAnthropicStrictSchema } from "./strict_schema.ts";

/**
 * Anthropic tools for canonical ones: `{name, description, input_schema}` (the parameters, or
 * an empty object schema), `cache_control` from a cache marker. A strict tool keeps `strict`
 * with its schema made acceptable to structured outputs where the model has them
 * (`structuredOutputs`); elsewhere it goes without, and `strict` is added to `dropped`.
 */
export function toAnthropicTools(
  tools: readonly ToolSpec[],
  structuredOutputs: boolean,
  dropped: Set<string>,
): Tool[] {
  return tools.map((tool) => {
    const schema = { type: "object", properties: {}, ...tool.parameters };
    const strict = tool.strict === true && structuredOutputs;
    if (tool.strict === true && !strict) dropped.add("strict");
    const out: Tool = {
      name: tool.name,
      input_schema: strict ? toAnthropicStrictSchema(schema) : schema,
    };
    if (tool.description !== undefined) out.description = tool.description;
    if (strict) out.strict = true;
    if (tool.cache !== undefined) out.cache_control = { ...tool.cache };
    return out;
  });
}

/** Anthropic's `tool_choice`: auto / required / named / none -> `auto` / `any` / `tool` /
 * `none`; `parallelToolCalls: false` adds `disable_parallel_tool_use` (with no choice given,
 * to `auto`). `null` when there is nothing to say. */
export function toAnthropicToolChoice(
  choice: ToolChoice | null,
  parallelToolCalls: boolean | undefined,
): AnthropicToolChoice | null {
  if (choice === "none") return { type: "none" };
  const serial = parallelToolCalls === false;
  let out: AnthropicToolChoice;
  if (choice === "required") out = { type: "any" };
  else if (choice !== null && typeof choice === "object") out = { type: "tool", name: choice.name };
  else if (choice === "auto" || serial) out = { type: "auto" };
  else return null;
  if (serial) out.disable_parallel_tool_use = true;
  return out;
}
