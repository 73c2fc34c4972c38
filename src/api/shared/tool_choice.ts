import type { ToolChoice, ToolSpec } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import type { Fields, Reader } from "../../validation/reader.ts";
import { FUNCTION_NAME } from "./tool_names.ts";

const CHOICES = ["none", "auto", "required"] as const;
const FUNCTION = ["function"] as const;

/** How an OpenAI protocol writes a named tool choice. */
export interface NamedChoice {
  /** What a bad choice was expected to be, for the error. */
  expected: string;
  /** The fields that hold the tool's `name` in the choice object (chat completions nests them
   * under `function`; the Responses API does not). */
  holder(choice: Fields): Fields;
}

/** OpenAI's `tool_choice`: `none`, `auto`, `required` (needs tools) or one of the tools, by
 * name, written as `named` says; `null` when absent. */
export function parseToolChoice(
  r: Reader | undefined,
  tools: readonly ToolSpec[],
  named: NamedChoice,
): ToolChoice | null {
  if (r === undefined) return null;
  if (typeof r.value === "string") {
    const choice = r.oneOf(CHOICES);
    if (choice === "required" && tools.length === 0) {
      throw r.invalid('"required" needs tools, but no tools were given');
    }
    return choice;
  }
  const choice = r.object({ expected: named.expected });
  choice.oneOf("type", FUNCTION);
  const holder = named.holder(choice);
  const name = holder.string("name", FUNCTION_NAME);
  if (!tools.some((t) => t.name === name)) {
    throw holder.get("name").invalid(
      `expected the name of one of the tools, but got ${quote(name)}`,
    );
  }
  return { name };
}
