/**
 * The response cache's key (docs/caching.md): a SHA-256 of the canonical request's fields that
 * change the answer, serialised with object keys in a stable order, so that the same question
 * through any front door, streamed or not, has the same key.
 */
import { createHash } from "node:crypto";
import type { CanonicalRequest, Message, Options, Part } from "../canonical/conversation.ts";

/** Options that say who asks, not what: they do not change the answer. (`maxTokensGiven` is
 * keyed: a back end may use its own default when the caller gave none.) */
const NOT_THE_ANSWER: ReadonlySet<keyof Options> = new Set(["user", "metadata"]);

/** Hex SHA-256 of what in `req` changes the answer: the model, the messages, the options
 * (tools and tool choice among them) but `user` and `metadata`, and the protocol's own extra
 * fields when there are any. Never `stream`, `includeUsage`, or prompt-cache markers (which
 * change what a call costs, not what it answers). */
export function cacheKey(req: CanonicalRequest): string {
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req.options)) {
    if (!NOT_THE_ANSWER.has(name as keyof Options)) options[name] = value;
  }
  options.tools = req.options.tools.map(({ cache: _, ...tool }) => tool);
  const keyed: Record<string, unknown> = {
    model: req.model,
    messages: req.messages.map(keyedMessage),
    options,
  };
  // A request with no extra fields keys the same whichever door it came through.
  if (Object.keys(req.extras.fields).length > 0) keyed.extras = req.extras;
  return createHash("sha256").update(stableJson(keyed)).digest("hex");
}

function keyedMessage(message: Message): unknown {
  return { ...message, parts: message.parts.map(keyedPart) };
}

/** A part without its prompt-cache marker (tool results' parts too). */
function keyedPart(part: Part): unknown {
  const { cache: _, ...rest } = part as Part & { cache?: unknown };
  if (rest.type === "tool_result") return { ...rest, content: rest.content.map(keyedPart) };
  return rest;
}

/** JSON of `value` with every object's keys in code-point order and `undefined` members left
 * out (as `JSON.stringify` leaves them out), so equal values serialise equally. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
