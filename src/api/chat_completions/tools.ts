import type { ToolSpec } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL, type Reader } from "../../validation/reader.ts";
import type { NamedChoice } from "../shared/tool_choice.ts";
import { uniqueToolName } from "../shared/tool_names.ts";
import { parseCacheControl } from "../shared/cache_control.ts";

/** The `type` of tools, tool calls and a named tool choice. */
export const FUNCTION_TYPE = ["function"] as const;

/** A function name: 1 to 64 letters, digits, underscores or dashes. */
/** OpenAI's limit on tools. */
const TOOLS = { optional: true, maxItems: 128 } as const;
/** A named tool choice as chat completions writes it. */
export const NAMED_CHOICE: NamedChoice = {
  expected: '"none", "auto", "required" or {"type": "function", "function": {"name": \u2026}}',
  holder: (choice) => choice.object("function"),
};
const OBJECT_SCHEMA = ["object"] as const;

/** `tools`: at most 128 functions with unique names; `function.strict` and a tool's
 * `cache_control` (LiteLLM's convention) are kept. */
export function parseTools(body: Fields): ToolSpec[] {
  const items = body.array("tools", TOOLS);
  if (items === undefined) return [];
  const names = new Map<string, number>();
  return items.map((item, i): ToolSpec => {
    const t = item.object();
    t.oneOf("type", FUNCTION_TYPE);
    const fn = t.object("function");
    const name = uniqueToolName(fn, names, i);
    const tool: ToolSpec = { name };
    const description = fn.string("description", OPTIONAL);
    if (description !== undefined) tool.description = description;
    const parameters = fn.optional("parameters");
    if (parameters !== undefined) tool.parameters = parseParameters(parameters);
    const strict = fn.boolean("strict", OPTIONAL);
    if (strict !== undefined) tool.strict = strict;
    const cache = parseCacheControl(t.object("cache_control", OPTIONAL));
    if (cache) tool.cache = cache;
    return tool;
  });
}

/** A function's `parameters`: a JSON schema of an object (its `null`s are values). */
function parseParameters(r: Reader): Record<string, unknown> {
  const schema = r.nullAsValue().object({ expected: "a JSON schema object" });
  schema.oneOf("type", OBJECT_SCHEMA, OPTIONAL);
  schema.object("properties", OPTIONAL);
  schema.array("required", OPTIONAL)?.forEach((name) => name.string());
  return schema.value;
}
