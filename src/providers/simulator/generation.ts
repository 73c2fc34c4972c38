/**
 * The tokens of the simulator's answer: its reasoning when the model thinks, then its text cut
 * before the first stop sequence, or its tool calls; all within `maxTokens` (over it, the
 * answer is cut with finish reason `length`), and the usage they make.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { FinishReason, Usage } from "../../canonical/result.ts";
import type { CallContext } from "../types.ts";
import { readConversation } from "./conversation_facts.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import { reasoningText, thinks } from "./reasoning.ts";
import { planReply } from "./reply.ts";
import { takeTokens } from "../../canonical/tokens.ts";

/** One block of the answer and its tokens: for a tool call, the pieces of its arguments (its
 * start costs one more token). */
export type Block =
  | { kind: "reasoning"; tokens: string[] }
  | { kind: "text"; tokens: string[] }
  | { kind: "tool_call"; id: string; name: string; tokens: string[] };

/** The whole answer, token by token. */
export interface Generation {
  blocks: Block[];
  finish: FinishReason;
  usage: Usage;
}

/** The text of a last assistant message made only of text (a prefill to continue), or
 * `null`. */
function prefillOf(req: CanonicalRequest): string | null {
  const last = req.messages.at(-1);
  if (last?.role !== "assistant" || last.parts.length === 0) return null;
  let text = "";
  for (const part of last.parts) {
    if (part.type !== "text") return null;
    text += part.text;
  }
  return text;
}

/** The answer to `req` (a 400 when a schema it samples is over the sampler's budget). With a
 * prefill (the conversation ends with the assistant's text, as Anthropic allows), the answer
 * goes on from it: the rest of the reply to the conversation before it, when that reply
 * starts with the prefill, else that whole reply; no reasoning. */
export function generate(req: CanonicalRequest, ctx: CallContext): Generation {
  const prefill = prefillOf(req);
  const asked = prefill === null ? req : { ...req, messages: req.messages.slice(0, -1) };
  const facts = readConversation(asked.messages);
  const planned = planReply(asked, facts, ctx.model.id);
  const reply = prefill !== null && planned.kind === "text" && planned.text.startsWith(prefill)
    ? { kind: "text" as const, text: planned.text.slice(prefill.length) }
    : planned;
  const blocks: Block[] = [];
  let room = req.options.maxTokens;
  let cut = false;
  /** The tokens of `text` that fit, and whether the answer is cut there. */
  const take = (text: string): string[] => {
    const { tokens, more } = takeTokens(text, room);
    room -= tokens.length;
    cut = more;
    return tokens;
  };
  const thinking = prefill === null && thinks(req, ctx.upstreamModel);
  if (thinking) blocks.push({ kind: "reasoning", tokens: take(reasoningText(req, facts, reply)) });
  const reasoning = req.options.maxTokens - room;
  if (reply.kind === "text") {
    const text = beforeStop(reply.text, req.options.stop);
    if (!cut && (room > 0 || text === "")) blocks.push({ kind: "text", tokens: take(text) });
    else cut ||= text !== "";
  } else {
    for (const call of reply.calls) {
      if (cut || room === 0) {
        cut = true;
        break;
      }
      room--;
      blocks.push({
        kind: "tool_call",
        id: call.id,
        name: call.name,
        tokens: take(call.arguments),
      });
    }
  }
  return {
    blocks,
    finish: cut ? "length" : reply.kind === "tool_calls" ? "tool_calls" : "stop",
    usage: {
      input: promptTokens(req),
      output: req.options.maxTokens - room,
      ...(thinking ? { reasoning } : {}),
    },
  };
}

/** `text` cut before the earliest of the stop sequences it contains. */
function beforeStop(text: string, stops: readonly string[]): string {
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0) text = text.slice(0, at);
  }
  return text;
}
