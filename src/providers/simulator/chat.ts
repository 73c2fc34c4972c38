/**
 * The simulator's chat: the answer of {@link generate}, whole after the per-token delay of all
 * its tokens, or streamed as canonical events, one batch per token, each token due at its own
 * time. Usage counts the same tokens that are streamed.
 */
import type { CanonicalRequest, Part } from "../../canonical/conversation.ts";
import type { BlockDelta, BlockKind, CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { CallContext } from "../types.ts";
import { type Block, generate } from "./generation.ts";
import type { SimulatorOptions } from "./options.ts";
import { sleep } from "../../sleep.ts";

/** The provider style its reasoning parts carry. */
const STYLE = "simulator";

/** A whole answer, after the delay of all its tokens. */
export async function simulateChat(
  req: CanonicalRequest,
  ctx: CallContext,
  options: SimulatorOptions,
): Promise<CanonicalResult> {
  const gen = generate(req, ctx);
  await sleep(gen.usage.output * options.tokenDelayMs, ctx.signal);
  return { parts: gen.blocks.map(toPart), finish: gen.finish, usage: gen.usage };
}

/**
 * A streamed answer: `start` at once; then one batch per token (a block's start goes with its
 * first token, its stop with its last; a tool call's start is a token of its own); usage and
 * finish right after the last token. Stops with the signal's reason when it aborts.
 */
export async function* simulateChatStream(
  req: CanonicalRequest,
  ctx: CallContext,
  options: SimulatorOptions,
): AsyncGenerator<CanonicalEvent[], void, undefined> {
  const gen = generate(req, ctx);
  // Each token is due at start + n × delay, so timer lateness does not add up over a stream.
  const start = performance.now();
  let n = 0;
  const next = () => sleep(start + ++n * options.tokenDelayMs - performance.now(), ctx.signal);
  yield [{ type: "start" }];
  let pending: CanonicalEvent[] = [];
  for (const [index, block] of gen.blocks.entries()) {
    pending.push({ type: "block_start", index, block: blockKind(block) });
    if (block.kind === "tool_call") {
      await next();
      yield pending;
      pending = [];
    }
    for (const [i, token] of block.tokens.entries()) {
      await next();
      pending.push({ type: "block_delta", index, delta: blockDelta(block, token) });
      if (i === block.tokens.length - 1) pending.push({ type: "block_stop", index });
      yield pending;
      pending = [];
    }
    if (block.tokens.length === 0) pending.push({ type: "block_stop", index });
  }
  yield [...pending, { type: "usage", usage: gen.usage }, { type: "finish", reason: gen.finish }];
}

function toPart(block: Block): Part {
  const text = block.tokens.join("");
  switch (block.kind) {
    case "reasoning":
      return { type: "reasoning", text, style: STYLE };
    case "text":
      return { type: "text", text };
    case "tool_call":
      return { type: "tool_call", id: block.id, name: block.name, arguments: text };
  }
}

function blockKind(block: Block): BlockKind {
  switch (block.kind) {
    case "reasoning":
      return { type: "reasoning", style: STYLE };
    case "text":
      return { type: "text" };
    case "tool_call":
      return { type: "tool_call", id: block.id, name: block.name };
  }
}

function blockDelta(block: Block, token: string): BlockDelta {
  switch (block.kind) {
    case "reasoning":
      return { type: "reasoning", text: token };
    case "text":
      return { type: "text", text: token };
    case "tool_call":
      return { type: "arguments", json: token };
  }
}
