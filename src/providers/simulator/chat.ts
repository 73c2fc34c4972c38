/**
 * The simulator's chat completions: the reply of {@link planReply}, cut at a stop sequence or
 * at `max_tokens`, delivered whole or token by token with the configured per-token delay.
 * Usage counts the same tokens that are streamed.
 */
import type {
  ChatChunk,
  ChatCompletion,
  ChatMessage,
  ChatRequest,
  ChunkChoice,
  Delta,
  FinishReason,
  ToolCall,
  Usage,
} from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import type { SimulatorOptions } from "./provider.ts";
import { contentText } from "../content_text.ts";
import { planReply } from "./reply.ts";
import { sleep } from "./sleep.ts";
import { countTokens, takeTokens } from "./tokens.ts";

/** One generated token: of the content, a tool call's start (its id and name), or a fragment
 * of a tool call's arguments. */
type Piece =
  | { kind: "content"; text: string }
  | { kind: "call"; index: number; id: string; name: string }
  | { kind: "arguments"; index: number; text: string };

interface Generation {
  pieces: Piece[];
  finish: FinishReason;
  usage: Usage;
}

/** Tokens a message costs beyond its text, and a whole prompt beyond its messages (OpenAI's
 * accounting is similar). */
const MESSAGE_OVERHEAD = 4;
const PROMPT_OVERHEAD = 3;
/** What an image costs in prompt tokens (OpenAI's low-detail price). */
const IMAGE_TOKENS = 85;

/** A non-streamed completion. */
export async function simulateChat(
  req: ChatRequest,
  ctx: CallContext,
  options: SimulatorOptions,
): Promise<ChatCompletion> {
  const gen = generate(req, ctx);
  await sleep(gen.pieces.length * options.tokenDelayMs, ctx.signal);
  let content: string | null = "";
  const calls: ToolCall[] = [];
  for (const piece of gen.pieces) {
    if (piece.kind === "content") content += piece.text;
    else if (piece.kind === "call") {
      calls.push({ id: piece.id, type: "function", function: { name: piece.name, arguments: "" } });
    } else calls[piece.index]!.function.arguments += piece.text;
  }
  if (calls.length > 0 && content === "") content = null;
  const completion: ChatCompletion = {
    id: completionId(ctx),
    object: "chat.completion",
    created: Math.floor(options.clock.now() / 1000),
    model: ctx.model.id,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content,
        refusal: null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
      logprobs: null,
      finish_reason: gen.finish,
    }],
    usage: gen.usage,
  };
  return completion;
}

/** A streamed completion: role first, then one chunk per token, the finish reason, usage. */
export async function* simulateChatStream(
  req: ChatRequest,
  ctx: CallContext,
  options: SimulatorOptions,
): AsyncIterable<ChatChunk> {
  const gen = generate(req, ctx);
  const base = {
    id: completionId(ctx),
    object: "chat.completion.chunk" as const,
    created: Math.floor(options.clock.now() / 1000),
    model: ctx.model.id,
  };
  const chunk = (delta: Delta, finish: FinishReason | null = null): ChatChunk => {
    const choice: ChunkChoice = { index: 0, delta, logprobs: null, finish_reason: finish };
    return { ...base, choices: [choice] };
  };
  // Each token is due at start + n × delay, so timer lateness does not add up over a stream.
  const start = performance.now();
  const due = (n: number) =>
    sleep(start + n * options.tokenDelayMs - performance.now(), ctx.signal);
  const first = gen.pieces[0];
  let rest = 0;
  if (first?.kind === "call") {
    await due(1);
    yield chunk({ role: "assistant", content: null, tool_calls: [callStart(first)] });
    rest = 1;
  } else {
    yield chunk({ role: "assistant", content: "" });
  }
  for (let i = rest; i < gen.pieces.length; i++) {
    await due(i + 1);
    const piece = gen.pieces[i]!;
    if (piece.kind === "content") yield chunk({ content: piece.text });
    else if (piece.kind === "call") yield chunk({ tool_calls: [callStart(piece)] });
    else {
      yield chunk({ tool_calls: [{ index: piece.index, function: { arguments: piece.text } }] });
    }
  }
  yield chunk({}, gen.finish);
  yield { ...base, choices: [], usage: gen.usage };
}

function callStart(piece: Extract<Piece, { kind: "call" }>) {
  return {
    index: piece.index,
    id: piece.id,
    type: "function" as const,
    function: { name: piece.name, arguments: "" },
  };
}

function completionId(ctx: CallContext): string {
  return `chatcmpl-${ctx.requestId.replace(/^req_/, "")}`;
}

/** The tokens of the reply, why they end, and the usage they make. */
function generate(req: ChatRequest, ctx: CallContext): Generation {
  const reply = planReply(req, ctx.model.id);
  const limit = req.max_tokens;
  let pieces: Piece[];
  let finish: FinishReason;
  if (reply.kind === "text") {
    let text = reply.text;
    for (const stop of req.stop) {
      const at = text.indexOf(stop);
      if (at >= 0) text = text.slice(0, at);
    }
    const { tokens, more } = takeTokens(text, limit);
    pieces = tokens.map((t) => ({ kind: "content", text: t }));
    finish = more ? "length" : "stop";
  } else {
    pieces = [];
    reply.calls.forEach((call, index) => {
      pieces.push({ kind: "call", index, id: call.id, name: call.function.name });
      for (const text of takeTokens(call.function.arguments).tokens) {
        pieces.push({ kind: "arguments", index, text });
      }
    });
    finish = pieces.length > limit ? "length" : "tool_calls";
    pieces = pieces.slice(0, limit);
  }
  const prompt = promptTokens(req);
  return {
    pieces,
    finish,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: pieces.length,
      total_tokens: prompt + pieces.length,
    },
  };
}

/** Prompt tokens: the text of every message and tool definition, plus fixed overheads. */
export function promptTokens(req: ChatRequest): number {
  let n = PROMPT_OVERHEAD;
  for (const m of req.messages) n += MESSAGE_OVERHEAD + messageTokens(m);
  if (req.tools.length > 0) n += countTokens(JSON.stringify(req.tools));
  return n;
}

function messageTokens(m: ChatMessage): number {
  let n = countTokens(contentText(m.content));
  if (Array.isArray(m.content)) {
    for (const part of m.content) if (part.type === "image_url") n += IMAGE_TOKENS;
  }
  if (m.role === "assistant" && m.tool_calls) {
    for (const c of m.tool_calls) n += 1 + countTokens(c.function.arguments);
  }
  return n;
}
