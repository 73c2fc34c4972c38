/**
 * The simulated model's reasoning: whether it thinks before it answers, and what it thinks (a
 * short plan of its reply, as deterministic as the reply).
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { clip } from "../../quote.ts";
import type { ConversationFacts } from "./conversation_facts.ts";
import type { Reply } from "./reply.ts";

/** Characters of the user's text, and of a schema's name, that the reasoning repeats. */
const QUOTE_CHARS = 80;

/** Whether the model thinks: when the request asks for reasoning, or when the upstream model
 * is a reasoning one (its name says so, as `sim-reasoning` does); never when the request turns
 * reasoning off. */
export function thinks(req: CanonicalRequest, upstreamModel: string): boolean {
  const asked = req.options.reasoning;
  if (asked?.disabled === true) return false;
  return asked !== undefined || upstreamModel.includes("reasoning");
}

/** What the model thinks before it gives `reply`. */
export function reasoningText(
  req: CanonicalRequest,
  facts: ConversationFacts,
  reply: Reply,
): string {
  const said = facts.userText === ""
    ? "There is no user text to go on."
    : `The user wrote: "${clip(facts.userText, QUOTE_CHARS)}".`;
  if (reply.kind === "tool_calls") {
    const names = reply.calls.map((c) => c.name);
    return `${said} I should call ${list(names)} and answer once I have the result${
      names.length === 1 ? "" : "s"
    }.`;
  }
  const tools = [...new Set(facts.toolResults.map((r) => r.name))];
  const results = tools.length === 0
    ? ""
    : ` The ${list(tools)} tool${tools.length === 1 ? " has" : "s have"} answered, so I can reply.`;
  const output = req.options.output;
  const form = output.type === "json"
    ? "a JSON object"
    : output.type === "json_schema"
    ? `JSON that matches the schema "${clip(output.name, QUOTE_CHARS)}"`
    : "plain text";
  return `${said}${results} I will answer in ${form}.`;
}

/** "a", "a and b", "a, b and c". */
function list(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
