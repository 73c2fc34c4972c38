import type { Options, ToolSpec } from "../../canonical/conversation.ts";
import type { ConversationFacts } from "./conversation_facts.ts";

/**
 * The tools the simulator calls: the one `toolChoice` names, else those the last user message
 * names (with `required`, the first tool when it names none), one only when parallel calls are
 * off. After tool results only a forced choice calls again.
 */
export function chooseTools(options: Options, facts: ConversationFacts): ToolSpec[] {
  const { tools, toolChoice: choice } = options;
  if (tools.length === 0 || choice === "none") return [];
  if (typeof choice === "object" && choice !== null) {
    return tools.filter((t) => t.name === choice.name);
  }
  if (facts.afterTools && choice !== "required") return [];
  let named = namedTools(tools, facts.userText);
  if (named.length === 0 && choice === "required") named = [tools[0]!];
  return options.parallelToolCalls === false ? named.slice(0, 1) : named;
}

/** The tools whose names appear as whole words in the text, in order of appearance: one pass
 * over the text's runs of name characters (a scan per tool was quadratic in long texts). */
function namedTools(tools: ToolSpec[], text: string): ToolSpec[] {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const found = new Set<ToolSpec>();
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
