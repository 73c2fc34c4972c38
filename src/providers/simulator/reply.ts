/**
 * What the simulator answers, decided from the request alone (so the same request always gets
 * the same answer): tool calls when asked for or when the last user message names tools, an
 * answer built on the tool results after a tool round trip, else a reply that quotes the last
 * user message and describes its images and documents; in the output format the request asks
 * for.
 */
import type { CanonicalRequest, ToolCallPart } from "../../canonical/conversation.ts";
import type { ConversationFacts } from "./conversation_facts.ts";
import { fnv1a, stableId } from "./hash.ts";
import { describeDocuments } from "./document_description.ts";
import { describeImages } from "./image_description.ts";
import { formatReply } from "./output_format.ts";
import { toolParametersParam } from "./request_params.ts";
import { SchemaSampler } from "./schema_sample.ts";
import { chooseTools } from "./tool_selection.ts";

/** The simulator's decision: a text reply, or calls of the request's tools. */
export type Reply =
  | { kind: "text"; text: string }
  | { kind: "tool_calls"; calls: ToolCallPart[] };

const OPENERS = [
  "Hello! ",
  "Thanks for your message. ",
  "Sure. ",
  "Good question. ",
  "Here is my reply. ",
];

/** The reply to `req`, whose conversation's facts are `facts`, made by the simulated model
 * `modelId`. */
export function planReply(
  req: CanonicalRequest,
  facts: ConversationFacts,
  modelId: string,
): Reply {
  const { tools } = req.options;
  const chosen = chooseTools(req.options, facts);
  if (chosen.length > 0) {
    const sampler = new SchemaSampler(facts.userText);
    return {
      kind: "tool_calls",
      calls: chosen.map((tool, i) => ({
        type: "tool_call",
        id: `call_${stableId(`${facts.key}#${i}`)}`,
        name: tool.name,
        arguments: JSON.stringify(
          sampler.sampleArguments(
            tool.parameters,
            toolParametersParam(req.extras.protocol, tools.indexOf(tool)),
          ),
        ),
      })),
    };
  }

  const { userText, toolResults } = facts;
  const count = req.messages.length;
  let text = OPENERS[fnv1a(facts.key) % OPENERS.length]!;
  if (toolResults.length > 0) {
    text += toolResults.map((r) => `The ${r.name} tool returned ${r.content}.`).join(" ");
    if (userText !== "") text += ` That answers your request: "${userText}".`;
  } else {
    text += `I am ${modelId}, a model simulated by Switchyard.`;
    if (userText !== "") text += ` You said: "${userText}".`;
    text += describeImages(facts.userImages);
    text += describeDocuments(facts.userDocuments);
    text += ` This conversation has ${count} message${count === 1 ? "" : "s"}.`;
  }
  return { kind: "text", text: formatReply(req, text, userText) };
}
