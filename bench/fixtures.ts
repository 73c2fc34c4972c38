/**
 * What the benchmarks send and receive: a typical chat body, and an upstream's answers in
 * OpenAI's and Anthropic's wire formats (JSON and SSE events), built once.
 */
const encoder = new TextEncoder();
const created = 1_700_000_000;

/** The chat request body of the load benchmark; with `promptBytes`, the user's message is
 * that long (a long prompt: a document to summarise). */
export function chatBody(model: string, stream: boolean, promptBytes = 0): string {
  const ask = "Say hello to the benchmark.";
  const content = promptBytes > 0 ? longText(promptBytes) : ask;
  return JSON.stringify({
    model,
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content },
    ],
    max_tokens: 64,
    stream,
  });
}

/** `bytes` of plain prose-like ASCII text. */
function longText(bytes: number): string {
  const sentence = "The quick brown fox jumps over the lazy dog while the gateway counts tokens. ";
  return sentence.repeat(Math.ceil(bytes / sentence.length)).slice(0, bytes);
}

/** An OpenAI chat completion. */
export const OPENAI_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created,
  model: "bench-upstream",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "Hello from the benchmark upstream.", refusal: null },
    logprobs: null,
    finish_reason: "stop",
  }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

/** An OpenAI stream of `chunks` content chunks as SSE events: the role chunk, the content
 * chunks, the finish chunk, the usage chunk and `[DONE]`. */
export function openaiEvents(chunks: number): string[] {
  const base = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created,
    model: "bench-upstream",
  };
  const choice = (delta: unknown, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const events: unknown[] = [choice({ role: "assistant", content: "" }, null)];
  for (let i = 0; i < chunks; i++) events.push(choice({ content: `tok${i} ` }, null));
  events.push(choice({}, "stop"));
  events.push({
    ...base,
    choices: [],
    usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks },
  });
  return [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), "data: [DONE]\n\n"];
}

/** A `fetch` that answers every call as an OpenAI upstream would, with canned bytes: the
 * stream of {@link openaiEvents} (`chunks` content chunks) when the body asks for one, else
 * {@link OPENAI_JSON}. For running the gateway in one process, without a network. */
export function cannedOpenAIFetch(chunks: number): typeof fetch {
  const stream = openaiEvents(chunks).join("");
  return ((_input: string | URL | Request, init?: RequestInit) => {
    const streaming = String(init?.body).includes('"stream":true');
    return Promise.resolve(
      new Response(streaming ? stream : OPENAI_JSON, {
        headers: { "content-type": streaming ? "text/event-stream" : "application/json" },
      }),
    );
  }) as typeof fetch;
}

/** An Anthropic message. */
export const ANTHROPIC_JSON = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "bench-upstream",
  content: [{ type: "text", text: "Hello from the benchmark upstream." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 7 },
});

/** An Anthropic stream of `chunks` text deltas as SSE events, `message_start` to
 * `message_stop`. */
export function anthropicEvents(chunks: number): string[] {
  const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const out = [
    ev("message_start", {
      type: "message_start",
      message: {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "bench-upstream",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
    ev("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
  ];
  for (let i = 0; i < chunks; i++) {
    out.push(ev("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: `tok${i} ` },
    }));
  }
  out.push(ev("content_block_stop", { type: "content_block_stop", index: 0 }));
  out.push(ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: chunks },
  }));
  out.push(ev("message_stop", { type: "message_stop" }));
  return out;
}

/** Events as the bytes one network read would carry. */
export function bytesOf(events: readonly string[]): Uint8Array {
  return encoder.encode(events.join(""));
}

/** Inputs in the embeddings rows' request (a batch, as retrieval indexing sends). */
export const EMBED_INPUTS = 100;
/** The length of the bench upstream's vectors (OpenAI's text-embedding-3-small). */
export const EMBED_DIMENSIONS = 1536;

/** An embeddings request of {@link EMBED_INPUTS} sentences of about 40 words, base64. */
export function embedBody(model: string): string {
  const input = Array.from(
    { length: EMBED_INPUTS },
    (_, i) =>
      `Passage ${i}: the quick brown fox jumps over the lazy dog while the gateway batches ` +
      `embeddings for retrieval, search and semantic caching across many documents and ` +
      `their chunks, each one indexed by its own number ${i} for the benchmark.`,
  );
  return JSON.stringify({ model, input, encoding_format: "base64" });
}

/** The bench upstream's embeddings answer: {@link EMBED_INPUTS} vectors, base64 or floats. */
export function embeddingsJson(base64: boolean): string {
  const vector = Array.from({ length: EMBED_DIMENSIONS }, (_, i) => Math.sin(i + 1) / 40);
  const bytes = new Uint8Array(new Float32Array(vector).buffer);
  const embedding = base64 ? bytes.toBase64() : Array.from(new Float32Array(vector));
  return JSON.stringify({
    object: "list",
    data: Array.from({ length: EMBED_INPUTS }, (_, index) => ({
      object: "embedding",
      index,
      embedding,
    })),
    model: "bench-upstream",
    usage: { prompt_tokens: EMBED_INPUTS * 40, total_tokens: EMBED_INPUTS * 40 },
  });
}

/** The conversation size of the agent-shaped rows: agents send 50-400 KB on every turn. */
export const AGENT_BYTES = 200 * 1024;
/** The tools an agent-shaped request declares. */
export const AGENT_TOOLS = 20;

/** An agent request as captured at the gateway, and the headers it came with. */
interface Captured {
  headers?: Record<string, string>;
  body: Record<string, unknown>;
}

function captured(path: string): Captured {
  const json = JSON.parse(Deno.readTextFileSync(new URL(path, import.meta.url)));
  return "body" in json ? json : { body: json };
}

/** A file's contents as an agent's Read tool returns them: numbered lines of code. */
function fileContents(n: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < bytes; i++) {
    const line = `${
      String(i).padStart(6)
    }\u2192  const value${n}_${i} = compute(input, ${i}); // step ${i} of file ${n}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

/** `tools` grown to {@link AGENT_TOOLS} by copies under new names. */
function moreTools<T extends Record<string, unknown>>(
  tools: T[],
  rename: (tool: T, name: string) => T,
  nameOf: (tool: T) => string,
): T[] {
  const out = [...tools];
  for (let i = 0; out.length < AGENT_TOOLS; i++) {
    const tool = tools[i % tools.length]!;
    out.push(rename(tool, `${nameOf(tool)}_${Math.floor(i / tools.length) + 2}`));
  }
  return out;
}

/**
 * A Claude Code turn through `/v1/messages`: the request Claude Code 2.1.332 sent
 * (tests/support/claude_code_request.json), its conversation grown to about {@link AGENT_BYTES}
 * with Read round trips (a `tool_use`, then a `tool_result` of a file's lines), its tools to
 * {@link AGENT_TOOLS}, a `cache_control` mark on the last turn as Claude Code puts it, streamed.
 */
export function claudeCodeBody(model: string, bytes = AGENT_BYTES): string {
  const { body } = captured("../tests/support/claude_code_request.json");
  // The captured turn ends with a Read call and its result: the round trips go before them.
  const messages = [...body.messages as Record<string, unknown>[]];
  const end = messages.splice(-2);
  for (let n = 0; JSON.stringify(messages).length < bytes; n++) {
    const id = `toolu_bench${String(n).padStart(4, "0")}`;
    messages.push(
      {
        role: "assistant",
        content: [
          { type: "text", text: `Reading src/module_${n}.ts next.` },
          { type: "tool_use", id, name: "Read", input: { file_path: `/repo/src/module_${n}.ts` } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: fileContents(n, 8 * 1024) }],
      },
    );
  }
  messages.push(...end);
  // Captured against the simulator, its thinking carries the gateway's mark; a session on a
  // Claude model has Anthropic's signatures (opaque to the gateway) there.
  const anthropicSigned = JSON.parse(
    JSON.stringify(messages).replaceAll(
      '"signature":"switchyard.reasoning.simulator"',
      `"signature":"${"RXVTaWduYXR1cmU".repeat(20)}"`,
    ),
  );
  type Tool = Record<string, unknown> & { name: string };
  const tools = moreTools(
    body.tools as Tool[],
    (t, name) => ({ ...t, name }),
    (t) => t.name,
  );
  return JSON.stringify({ ...body, model, messages: anthropicSigned, tools, stream: true });
}

/** The headers Claude Code sent with {@link claudeCodeBody}'s request (its betas). */
export function claudeCodeHeaders(): Record<string, string> {
  const headers = captured("../tests/support/claude_code_request.json").headers ?? {};
  return {
    "anthropic-version": headers["anthropic-version"] ?? "2023-06-01",
    "anthropic-beta": headers["anthropic-beta"] ?? "",
  };
}

/**
 * A Codex CLI turn through `/v1/responses`: the request Codex 0.171.0 sent
 * (tests/api/responses/fixtures/codex_0.171.0_request.json), its input grown to about
 * {@link AGENT_BYTES} with `exec_command` round trips (a `function_call`, then its output), its
 * function tools copied up to about {@link AGENT_TOOLS} (the hosted and namespace tools once),
 * streamed.
 */
export function codexBody(model: string, bytes = AGENT_BYTES): string {
  const { body } = captured("../tests/api/responses/fixtures/codex_0.171.0_request.json");
  const input = [...body.input as Record<string, unknown>[]];
  const last = input.pop()!;
  for (let n = 0; JSON.stringify(input).length < bytes; n++) {
    const call_id = `call_bench${String(n).padStart(4, "0")}`;
    input.push(
      {
        type: "function_call",
        name: "exec_command",
        arguments: JSON.stringify({ cmd: `cat src/module_${n}.rs` }),
        call_id,
      },
      {
        type: "function_call_output",
        call_id,
        output: JSON.stringify({ output: fileContents(n, 8 * 1024), metadata: { exit_code: 0 } }),
      },
    );
  }
  input.push(last);
  type Tool = Record<string, unknown>;
  const nameOf = (t: Tool) => String(t.name ?? t.type);
  const tools = moreTools(
    body.tools as Tool[],
    (t, name) => t.type === "function" || t.type === "custom" ? { ...t, name } : t,
    nameOf,
  ).filter((t, i, all) => all.findIndex((u) => JSON.stringify(u) === JSON.stringify(t)) === i);
  return JSON.stringify({ ...body, model, input, tools, stream: true });
}
