/** Builds what a provider adapter is called with, for adapter-level tests. */
import { inlineImageWork } from "../../src/images/work.ts";
import type { ModelRecord } from "../../src/catalogue/model.ts";
import type { ProviderConfig, ProviderStyle } from "../../src/config.ts";
import { Logger } from "../../src/log/logger.ts";
import type { ProviderDeps } from "../../src/providers/registry.ts";
import type { CallContext } from "../../src/providers/types.ts";
import type { ChatChunk, ChatRequest } from "../../src/types/openai.ts";
import { CapturedOutput, FakeClock } from "./server.ts";

/** A validated chat request with the spec's defaults; `patch` overrides fields. */
export function chatRequest(patch: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "up-model",
    messages: [{ role: "user", content: "Hello there" }],
    temperature: 1,
    max_tokens: 256,
    stream: false,
    include_usage: false,
    stop: [],
    tools: [],
    tool_choice: null,
    max_tokens_given: false,
    temperature_given: false,
    extra: {},
    ...patch,
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
      timeout_ms: 5_000,
      max_retries: 2,
      headers: {},
      token_delay_ms: 0,
      max_response_bytes: 64 * 1024 * 1024,
      max_event_bytes: 8 * 1024 * 1024,
      anthropic_version: "2023-06-01",
      ...patch,
    },
    apiKey,
    fetch,
    clock,
    logger: new Logger({ clock, output }),
    images: inlineImageWork,
    output,
  };
}

/** Reads a whole stream of chunks. */
export async function collect(stream: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
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
