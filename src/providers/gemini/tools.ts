import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import { toGeminiSchema } from "./schema.ts";
import type { FunctionCallingConfig, FunctionDeclaration } from "./types.ts";

/**
 * Gemini function declarations for canonical tools: `{name, description,
 * parametersJsonSchema}` (the parameters made acceptable, see schema.ts; none for a
 * tool without parameters). Gemini has no strict tools: `strict` goes to `dropped`, as do
 * cache markers (`cache_control`).
 */
export function toGeminiFunctions(
  tools: readonly ToolSpec[],
  dropped: Set<string>,
): FunctionDeclaration[] {
  return tools.map((tool) => {
    const declaration: FunctionDeclaration = { name: tool.name };
    if (tool.description !== undefined) declaration.description = tool.description;
    if (tool.parameters !== undefined) {
      declaration.parametersJsonSchema = toGeminiSchema({ type: "object", ...tool.parameters });
    }
    if (tool.strict === true) dropped.add("strict");
    if (tool.cache !== undefined) dropped.add("cache_control");
    return declaration;
  });
}

/**
 * `toolConfig.functionCallingConfig` for a tool choice: none / auto / required -> `NONE` /
 * `AUTO` / `ANY`, a named tool -> `ANY` allowed only that one; `null` when there is nothing to
 * say. Gemini cannot forbid parallel calls: `parallelToolCalls: false` goes to `dropped`.
 */
export function toGeminiToolConfig(
  choice: ToolChoice | null,
  parallelToolCalls: boolean | undefined,
  dropped: Set<string>,
): FunctionCallingConfig | null {
  if (parallelToolCalls === false) dropped.add("parallel_tool_calls");
  if (choice === null) return null;
  if (choice === "none") return { mode: "NONE" };
  if (choice === "auto") return { mode: "AUTO" };
  if (choice === "required") return { mode: "ANY" };
  return { mode: "ANY", allowedFunctionNames: [choice.name] };
}
