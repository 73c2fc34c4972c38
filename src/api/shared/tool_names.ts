/** Tool names as every front door reads them: their form, and one tool per name. */
import { quote } from "../../quote.ts";
import type { Fields } from "../../validation/reader.ts";

/** What a function (tool) name may be: OpenAI's rule, which the other protocols' fit. */
export const FUNCTION_NAME = {
  pattern: /^[A-Za-z0-9_-]{1,64}$/,
  format: "1 to 64 letters, digits, underscores or dashes",
} as const;

/** The tools' names so far, by first index, for {@link uniqueToolName}. */
export type ToolNames = Map<string, number>;

/** Reads the `name` of tool `index` from `tool`: a 400 naming it when it is malformed or when
 * an earlier tool (in `names`, which it joins) has it. */
export function uniqueToolName(tool: Fields, names: ToolNames, index: number): string {
  const name = tool.string("name", FUNCTION_NAME);
  const first = names.get(name);
  if (first !== undefined) {
    throw tool.get("name").invalid(
      `expected a name no other tool has, but got ${quote(name)} (also tools[${first}])`,
    );
  }
  names.set(name, index);
  return name;
}
