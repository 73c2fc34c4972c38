/** Builds what a provider adapter is called with, for adapter-level tests. */
import { inlineImageWork } from "../../src/images/work.ts";
import type { ModelRecord } from "../../src/catalogue/model.ts";
import type { ProviderConfig, ProviderStyle } from "../../src/config/types.ts";
import { Logger } from "../../src/log/logger.ts";
import type { ProviderDeps } from "../../src/providers/types.ts";
import type { CallContext } from "../../src/providers/types.ts";
import type { CanonicalRequest, Options, Part } from "../../src/canonical/conversation.ts";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { FinishReason, Usage } from "../../src/canonical/result.ts";
import { NativeHttpClient } from "../../src/http/client/native.ts";
import { CapturedOutput, FakeClock } from "./server.ts";

/** A canonical chat request with the spec's defaults; `patch` overrides fields, `options`
 * overrides options. */
export function chatRequest(
  patch: Partial<CanonicalRequest> = {},
  options: Partial<Options> = {},
): CanonicalRequest {
  return {
    model: "gw-model",
    messages: [{ role: "user", parts: [{ type: "text", text: "Hello there" }] }],
    stream: false,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
    ...patch,
    options: {
      maxTokens: 256,
      maxTokensGiven: false,
      stop: [],
      output: { type: "text" },
      tools: [],
      toolChoice: null,
      ...patch.options,
      ...options,
    },
  };
}

/** A catalogue record for a chat model of `provider`. */
export function modelRecord(patch: Partial<ModelRecord> = {}): ModelRecord {
  return {
    id: "gw-model",
    provider: "up",
    upstream_model: "upstream-model-v1",
    owned_by: "up",
    created: 1_700_000_000,
    chat_completions: true,
    moderation: false,
    image_input: true,
    function_calling: true,
    image_generation: null,
    access: "public",
    featured: false,
    labels: [],
    context_length: null,
    default_moderation: false,
    moderation_mode: "native",
    moderation_thresholds: {},
    enabled: true,
    source: "config",
    ...patch,
  };
}

/** A call context whose signal the test controls. */
export function callContext(
  model: ModelRecord = modelRecord(),
): CallContext & { abort: AbortController } {
  const abort = new AbortController();
  return {
    signal: abort.signal,
    requestId: "req_test0001",
    upstreamModel: model.upstream_model,
    model,
    dropped: new Set(),
    abort,
  };
}

/** Provider deps pointing at `baseUrl`, with a logger whose output the test can read. */
export function providerDeps(
  style: ProviderStyle,
  baseUrl: string,
  apiKey: string | null,
  patch: Partial<ProviderConfig> = {},
): ProviderDeps & { output: CapturedOutput } {
  const output = new CapturedOutput();
  const clock = new FakeClock();
  return {
    config: {
      id: "up",
      style,
      base_url: baseUrl,
      api_key_env: "UP_API_KEY",
      ca_certs_env: null,
      timeout_ms: 5_000,
      max_retries: 2,
      headers: {},
      token_delay_ms: 0,
      max_response_bytes: 64 * 1024 * 1024,
      max_event_bytes: 8 * 1024 * 1024,
      anthropic_version: "2023-06-01",
      responses_api: false,
      rerank_path: "/rerank",
      rerank_format: "cohere",
      ...patch,
    },
    apiKey,
    http: new NativeHttpClient(),
    clock,
    logger: new Logger({ clock, output }),
    images: inlineImageWork,
    output,
  };
}

/** Reads a whole canonical stream, its batches flattened (each batch must be non-empty). */
export async function collect(
  stream: AsyncIterable<CanonicalEvent[]>,
): Promise<CanonicalEvent[]> {
  const events: CanonicalEvent[] = [];
  for await (const batch of stream) {
    if (batch.length === 0) throw new Error("stream contract: an empty batch");
    events.push(...batch);
  }
  return events;
}

/**
 * The answer a front door assembles from canonical events, after checking their contract:
 * `start` first; blocks opened at indexes 0, 1, … in order, deltas only to an open block of a
 * matching kind, every block stopped; one `finish`, after every block; `usage` anywhere (the
 * last counts).
 */
export function assembleEvents(events: readonly CanonicalEvent[]): {
  parts: Part[];
  finish: FinishReason | null;
  detail: string | undefined;
  usage: Usage | null;
} {
  const fail = (why: string): never => {
    throw new Error(`event contract: ${why}\n${JSON.stringify(events, null, 1)}`);
  };
  if (events[0]?.type !== "start") fail("the first event is not start");
  const parts: Part[] = [];
  const open = new Set<number>();
  let finish: FinishReason | null = null;
  let detail: string | undefined;
  let usage: Usage | null = null;
  for (const event of events.slice(1)) {
    if (finish !== null && event.type !== "usage") fail(`${event.type} after finish`);
    switch (event.type) {
      case "start":
        fail("a second start");
        break;
      case "block_start": {
        if (event.index !== parts.length) fail(`block ${event.index} opened out of order`);
        const b = event.block;
        parts.push(
          b.type === "text"
            ? { type: "text", text: "" }
            : b.type === "refusal"
            ? { type: "refusal", text: "" }
            : b.type === "tool_call"
            ? { type: "tool_call", id: b.id, name: b.name, arguments: "" }
            : {
              type: "reasoning",
              text: "",
              ...(b.redacted !== undefined ? { redacted: b.redacted } : {}),
              ...(b.style !== undefined ? { style: b.style } : {}),
            },
        );
        open.add(event.index);
        break;
      }
      case "block_delta": {
        if (!open.has(event.index)) fail(`a delta to block ${event.index}, which is not open`);
        const part = parts[event.index]!;
        const d = event.delta;
        if (d.type === "text" && part.type === "text") part.text += d.text;
        else if (d.type === "refusal" && part.type === "refusal") part.text += d.text;
        else if (d.type === "arguments" && part.type === "tool_call") part.arguments += d.json;
        else if (d.type === "reasoning" && part.type === "reasoning") part.text += d.text;
        else if (d.type === "signature" && part.type === "reasoning") {
          part.signature = (part.signature ?? "") + d.signature;
        } else fail(`a ${d.type} delta to a ${part.type} block`);
        break;
      }
      case "block_stop":
        if (!open.delete(event.index)) fail(`block ${event.index} stopped but not open`);
        break;
      case "usage":
        usage = event.usage;
        break;
      case "finish":
        if (open.size > 0) fail("finish with blocks open");
        finish = event.reason;
        detail = event.detail;
        break;
    }
  }
  if (finish === null) fail("no finish");
  return { parts, finish, detail, usage };
}

/** A chunk as the route or the `openai` client sees it (loosely typed). */
interface AnyChunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: string | null;
      content?: string | null;
      tool_calls?: {
        index: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** Rebuilds the message a client would assemble from chunks (content, tool calls, finish). */
export function assemble(chunks: readonly AnyChunk[]) {
  let content = "";
  let role: string | undefined;
  let finish: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let usage: AnyChunk["usage"] = null;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      role ??= choice.delta.role ?? undefined;
      content += choice.delta.content ?? "";
      if (choice.finish_reason) finish = choice.finish_reason;
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = calls[call.index] ??= { id: "", name: "", arguments: "" };
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        slot.arguments += call.function?.arguments ?? "";
      }
    }
  }
  return { role, content, finish, calls, usage };
}

/**
 * Checks the stream contract of BRIEF.md: one id/created/model; role in the first chunk; each
 * tool call's first fragment with index, id, type, name and empty arguments, later ones only
 * index and argument pieces, indexes 0, 1, …; finish_reason null until the last choice chunk,
 * which has an empty delta; then one `choices: []` usage chunk whose total adds up.
 */
export function assertStreamContract(
  chunks: readonly AnyChunk[],
  model: string,
  options: { usageChunk?: boolean } = {},
): void {
  const fail = (why: string): never => {
    throw new Error(`stream contract: ${why}\n${JSON.stringify(chunks, null, 1)}`);
  };
  if (chunks.length < 2) fail("fewer than two chunks");
  const first = chunks[0]!;
  for (const c of chunks) {
    if (c.id !== first.id || c.created !== first.created) fail("id/created differ between chunks");
    if (c.model !== model) fail(`model ${c.model} is not ${model}`);
    if (c.object !== "chat.completion.chunk") fail(`object ${c.object}`);
  }
  const withUsage = options.usageChunk ?? true;
  const choiceChunks = withUsage ? chunks.slice(0, -1) : chunks;
  if (withUsage) {
    const last = chunks.at(-1)!;
    if (last.choices.length !== 0 || !last.usage) fail("the last chunk is not the usage chunk");
    const u = last.usage!;
    if (u.total_tokens !== u.prompt_tokens + u.completion_tokens) fail("usage does not add up");
  }
  if (first.choices[0]?.delta.role !== "assistant") fail("no role in the first chunk");
  const started = new Set<number>();
  choiceChunks.forEach((c, i) => {
    if (c.choices.length !== 1) fail(`chunk ${i} has ${c.choices.length} choices`);
    const choice = c.choices[0]!;
    const isLast = i === choiceChunks.length - 1;
    if (isLast) {
      if (choice.finish_reason === null) fail("the last choice chunk has no finish_reason");
      if (Object.keys(choice.delta).length !== 0) fail("the last choice chunk has a delta");
    } else if (choice.finish_reason !== null) fail(`chunk ${i} has a finish_reason early`);
    if (i > 0 && choice.delta.role !== undefined) fail(`chunk ${i} repeats the role`);
    for (const call of choice.delta.tool_calls ?? []) {
      if (!started.has(call.index)) {
        if (call.index !== started.size) fail(`tool call index ${call.index} out of order`);
        started.add(call.index);
        if (
          !call.id || call.type !== "function" || !call.function?.name ||
          call.function.arguments !== ""
        ) fail(`the first fragment of tool call ${call.index} is incomplete`);
      } else if (call.id !== undefined || call.type !== undefined || call.function?.name) {
        fail(`a later fragment of tool call ${call.index} repeats id/type/name`);
      }
    }
  });
}
