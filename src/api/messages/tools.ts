/**
 * `tools` and `tool_choice` of a Messages request. Client tools (no `type`, or `custom`) become
 * canonical tools; server tools (`web_search_...`, `bash_...`, `code_execution_...`: any other
 * `type`) are recorded in `uses` as hosted tools, since only Anthropic runs them.
 */
import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { uniqueToolName } from "../shared/tool_names.ts";
import type { Uses } from "../../canonical/uses.ts";

const TOOLS = { optional: true } as const;
const SCHEMA = { expected: "a JSON schema object" } as const;
const OBJECT_SCHEMA = ["object"] as const;
const CHOICES = ["auto", "any", "tool", "none"] as const;

/** The fields of a client tool that the canonical tool carries. */
const TOOL_FIELDS = new Set([
  "type",
  "name",
  "description",
  "input_schema",
  "strict",
  "cache_control",
]);

/**
 * `tools`: client tools with unique names, as canonical tools. A tool's other fields
 * (`defer_loading`, `eager_input_streaming`, `input_examples`, `allowed_callers`: hints only
 * Anthropic acts on) are added to `dropped` by name; the tool itself stays, so a deferred tool
 * (`defer_loading: true`) is offered up front and callable on every back end.
 */
export function parseTools(body: Fields, uses: Uses, dropped?: Set<string>): ToolSpec[] {
  const items = body.array("tools", TOOLS);
  if (items === undefined) return [];
  const names = new Map<string, number>();
  const tools: ToolSpec[] = [];
  items.forEach((item, i) => {
    const t = item.object();
    const type = t.get("type");
    const kind = type.string(OPTIONAL);
    if (kind !== undefined && kind !== "custom") {
      uses.hostedTools.push({ path: type.path, type: kind });
      return;
    }
    const name = uniqueToolName(t, names, i);
    const schema = t.get("input_schema").nullAsValue().object(SCHEMA);
    schema.oneOf("type", OBJECT_SCHEMA);
    schema.object("properties", OPTIONAL);
    const tool: ToolSpec = { name, parameters: schema.value };
    const description = t.string("description", OPTIONAL);
    if (description !== undefined) tool.description = description;
    const strict = t.boolean("strict", OPTIONAL);
    if (strict !== undefined) tool.strict = strict;
    const cache = parseCacheControl(t.object("cache_control", OPTIONAL));
    if (cache) tool.cache = cache;
    for (const key of Object.keys(t.value)) if (!TOOL_FIELDS.has(key)) dropped?.add(key);
    tools.push(tool);
  });
  return tools;
}

/** `tool_choice`: auto, any (needs tools), a tool by name, or none; with
 * `disable_parallel_tool_use` as `parallelToolCalls: false`. A choice only server tools can
 * meet (`any` with no client tools, a server tool by name) leaves the choice to the model
 * (`auto`) where the server tools are left out, as the Responses API's hosted tools do. */
export function parseToolChoice(
  f: Fields | undefined,
  tools: readonly ToolSpec[],
  serverTools: boolean,
): { choice: ToolChoice | null; parallel?: boolean } {
  if (f === undefined) return { choice: null };
  const type = f.oneOf("type", CHOICES);
  const serial = type === "none" ? undefined : f.boolean("disable_parallel_tool_use", OPTIONAL);
  const parallel = serial === undefined ? {} : { parallel: !serial };
  switch (type) {
    case "none":
      return { choice: "none" };
    case "auto":
      return { choice: "auto", ...parallel };
    case "any":
      if (tools.length === 0 && !serverTools) {
        throw f.get("type").invalid('"any" needs tools, but no tools were given');
      }
      return { choice: tools.length === 0 ? "auto" : "required", ...parallel };
    case "tool": {
      const name = f.string("name", { nonEmpty: true });
      if (!tools.some((t) => t.name === name)) {
        if (serverTools) return { choice: "auto", ...parallel };
        throw f.get("name").invalid(
          `expected the name of one of the tools, but got ${quote(name)}`,
        );
      }
      return { choice: { name }, ...parallel };
    }
  }
}
