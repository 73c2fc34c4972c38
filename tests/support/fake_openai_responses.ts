/**
 * A fake upstream with OpenAI's Responses API: `POST /v1/responses` checked against the
 * documented request (known top-level fields, input items, that a reasoning item sent back
 * carries the fake's own `encrypted_content`, `previous_response_id` only for responses it
 * stored), answered byte for byte as OpenAI answers: a Response object, or the named SSE
 * events (`event: <type>` + `data:`) with `sequence_number`, written in slices when asked.
 * With `reasoning` in the request it reasons first (a reasoning item with a summary and an
 * opaque `encrypted_content` when `include` asks for it). What it received is in `received`.
 */
import { type Conversation, generate, type Script, type Turn } from "./fake_model.ts";
import { FAKE_API_KEY, type FakeOptions, type FakeStyle, FakeUpstream } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

const TOP_LEVEL = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "temperature",
  "top_p",
  "reasoning",
  "text",
  "stream",
  "stream_options",
  "store",
  "previous_response_id",
  "include",
  "metadata",
  "user",
  "truncation",
  "service_tier",
  "background",
  "prompt_cache_key",
  "safety_identifier",
  "top_logprobs",
  "max_tool_calls",
  "conversation",
  "prompt",
  "prompt_cache_retention",
  // Undocumented, but OpenAI takes it: Codex CLI sends it on every request.
  "client_metadata",
]);

/** The fake's own encrypted reasoning: opaque to everyone else. */
const ENCRYPTED_PREFIX = "gAAAAAfake";

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A running fake Responses upstream. */
export interface FakeOpenAIResponses extends FakeUpstream {
  /** Ids of the responses it stored. */
  stored: Set<string>;
}

/** Starts the fake on a free port; its `url` + `/v1` is a `base_url`. */
export function startFakeOpenAIResponses(options: FakeOptions = {}): FakeOpenAIResponses {
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const stored = new Set<string>();
  let responses = 0;
  let calls = 0;
  const style: FakeStyle = {
    path: "/v1/responses",
    check: (headers, body) => check(headers, body, apiKey, stored),
    answer(body, script: Script) {
      const id = `resp_fake${String(++responses).padStart(8, "0")}`;
      const conversation = conversationOf(body);
      const g = generate(conversation, script(conversation), () => `call_${++calls}`);
      const reasoning = isObj(body.reasoning) && body.reasoning.effort !== "none"
        ? `Thinking about: ${conversation.turns.at(-1)?.texts.join(" ") ?? ""}`
        : null;
      const include = Array.isArray(body.include) ? body.include : [];
      const output: Obj[] = [];
      if (reasoning !== null) {
        const item: Obj = {
          id: `rs_${id}`,
          type: "reasoning",
          summary: [{ type: "summary_text", text: reasoning }],
        };
        if (include.includes("reasoning.encrypted_content")) {
          item.encrypted_content = ENCRYPTED_PREFIX + btoa(reasoning);
        }
        output.push(item);
      }
      if (g.pieces.length > 0 || g.toolCalls.length === 0) {
        output.push({
          id: `msg_${id}`,
          type: "message",
          status: g.finish === "length" ? "incomplete" : "completed",
          role: "assistant",
          content: [{
            type: "output_text",
            text: g.pieces.join(""),
            annotations: [],
            logprobs: [],
          }],
        });
      }
      for (const call of g.toolCalls) {
        output.push({
          id: `fc_${call.id}`,
          type: "function_call",
          status: "completed",
          arguments: call.arguments,
          call_id: call.id,
          name: call.name,
        });
      }
      const reasoningTokens = reasoning === null ? 0 : reasoning.split(" ").length;
      const response: Obj = {
        id,
        object: "response",
        created_at: 1_768_478_400,
        status: g.finish === "length" ? "incomplete" : "completed",
        completed_at: 1_768_478_401,
        error: null,
        incomplete_details: g.finish === "length" ? { reason: "max_output_tokens" } : null,
        instructions: body.instructions ?? null,
        max_output_tokens: body.max_output_tokens ?? null,
        model: body.model,
        output,
        parallel_tool_calls: body.parallel_tool_calls ?? true,
        previous_response_id: body.previous_response_id ?? null,
        reasoning: {
          effort: null,
          summary: null,
          ...(isObj(body.reasoning) ? body.reasoning : {}),
        },
        store: body.store ?? true,
        temperature: body.temperature ?? 1,
        text: body.text ?? { format: { type: "text" } },
        tool_choice: body.tool_choice ?? "auto",
        tools: body.tools ?? [],
        top_p: body.top_p ?? 1,
        truncation: "disabled",
        usage: {
          input_tokens: g.promptTokens,
          input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
          output_tokens: g.completionTokens + reasoningTokens,
          output_tokens_details: { reasoning_tokens: reasoningTokens },
          total_tokens: g.promptTokens + g.completionTokens + reasoningTokens,
        },
        metadata: body.metadata ?? {},
      };
      if (body.store !== false) stored.add(id);
      if (body.stream !== true) return { kind: "json", status: 200, body: response };
      return { kind: "stream", events: streamEvents(response) };
    },
    errorBody: (_status, type, message, code) => ({
      error: { message, type, param: null, code: code ?? null },
    }),
    streamError: (type, message) =>
      `event: error\ndata: ${
        JSON.stringify({ type: "error", code: type, message, param: null, sequence_number: 0 })
      }\n\n`,
  };
  return Object.assign(new FakeUpstream(style, { ...options, apiKey }), { stored });
}

/** The request's violations of the documented format. */
function check(headers: Headers, body: unknown, apiKey: string, stored: Set<string>): string[] {
  if (headers.get("authorization") !== `Bearer ${apiKey}`) return ["auth: bad key"];
  if (!isObj(body)) return ["body: expected a JSON object"];
  const bad: string[] = [];
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) bad.push(`Unknown parameter: '${key}'.`);
  }
  if (typeof body.model !== "string") bad.push("model: required");
  const prev = body.previous_response_id;
  if (prev !== undefined && prev !== null && !stored.has(String(prev))) {
    bad.push(`Previous response with id '${prev}' not found.`);
  }
  const input = body.input;
  if (typeof input !== "string") {
    if (!Array.isArray(input)) bad.push("input: expected a string or an array");
    else {
      input.forEach((item, i) => {
        if (!isObj(item)) {
          bad.push(`input[${i}]: expected an object`);
          return;
        }
        if (item.type === "reasoning") {
          const enc = item.encrypted_content;
          if (typeof enc === "string" && !enc.startsWith(ENCRYPTED_PREFIX)) {
            bad.push(`input[${i}].encrypted_content: The encrypted content could not be verified.`);
          }
        }
      });
    }
  }
  return bad;
}

/** What the request asks, in neither provider's shape. */
function conversationOf(body: Obj): Conversation {
  const turns: Turn[] = [];
  const turn = (role: Turn["role"]): Turn => {
    const last = turns.at(-1);
    if (last?.role === role) return last;
    const t: Turn = { role, texts: [], images: [], toolCalls: [], toolResults: [] };
    turns.push(t);
    return t;
  };
  const system: string[] = typeof body.instructions === "string" ? [body.instructions] : [];
  const items = typeof body.input === "string"
    ? [{ role: "user", content: body.input }]
    : body.input as Obj[];
  for (const item of items) {
    const text = (c: unknown) =>
      typeof c === "string"
        ? [c]
        : Array.isArray(c)
        ? c.flatMap((p: Obj) => typeof p.text === "string" ? [p.text] : [])
        : [];
    if (item.type === "function_call") {
      turn("assistant").toolCalls.push({
        id: String(item.call_id),
        name: String(item.name),
        arguments: JSON.parse(String(item.arguments)),
      });
    } else if (item.type === "function_call_output") {
      turn("user").toolResults.push({ id: String(item.call_id), text: text(item.output).join("") });
    } else if (item.type === "reasoning") {
      turn("assistant");
    } else if (item.role === "system" || item.role === "developer") {
      system.push(...text(item.content));
    } else {
      turn(item.role === "assistant" ? "assistant" : "user").texts.push(...text(item.content));
    }
  }
  const tools = (Array.isArray(body.tools) ? body.tools as Obj[] : [])
    .filter((t) => t.type === "function")
    .map((t) => ({
      name: String(t.name),
      description: typeof t.description === "string" ? t.description : null,
      parameters: (isObj(t.parameters) ? t.parameters : {}) as Record<string, unknown>,
    }));
  const choice = body.tool_choice;
  return {
    model: String(body.model),
    system,
    turns,
    tools,
    toolChoice: isObj(choice) ? { name: String(choice.name) } : (choice as "auto") ?? "auto",
    maxTokens: typeof body.max_output_tokens === "number" ? body.max_output_tokens : 4096,
    stop: [],
    temperature: typeof body.temperature === "number" ? body.temperature : null,
  };
}

/** The Response's stream, event by event as OpenAI writes it. */
function streamEvents(response: Obj): string[] {
  const events: string[] = [];
  let sequence = 0;
  const emit = (event: Obj) =>
    events.push(
      `event: ${event.type}\ndata: ${
        JSON.stringify({ ...event, sequence_number: sequence++ })
      }\n\n`,
    );
  // A response in progress has no usage yet.
  const { usage: _usage, ...rest } = response;
  const pending = { ...rest, status: "in_progress", output: [], completed_at: null };
  emit({ type: "response.created", response: pending });
  emit({ type: "response.in_progress", response: pending });
  (response.output as Obj[]).forEach((item, outputIndex) => {
    const at = { item_id: item.id, output_index: outputIndex };
    if (item.type === "reasoning") {
      emit({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, summary: [] },
      });
      for (const [i, s] of (item.summary as Obj[]).entries()) {
        emit({
          type: "response.reasoning_summary_part.added",
          ...at,
          summary_index: i,
          part: { type: "summary_text", text: "" },
        });
        emit({
          type: "response.reasoning_summary_text.delta",
          ...at,
          summary_index: i,
          delta: s.text,
          obfuscation: "abc",
        });
        emit({
          type: "response.reasoning_summary_text.done",
          ...at,
          summary_index: i,
          text: s.text,
        });
        emit({ type: "response.reasoning_summary_part.done", ...at, summary_index: i, part: s });
      }
    } else if (item.type === "message") {
      emit({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, status: "in_progress", content: [] },
      });
      const part = (item.content as Obj[])[0]!;
      const at2 = { ...at, content_index: 0 };
      emit({ type: "response.content_part.added", ...at2, part: { ...part, text: "" } });
      for (const piece of String(part.text).match(/\S+\s*/g) ?? []) {
        emit({
          type: "response.output_text.delta",
          ...at2,
          delta: piece,
          logprobs: [],
          obfuscation: "xyz",
        });
      }
      emit({ type: "response.output_text.done", ...at2, text: part.text, logprobs: [] });
      emit({ type: "response.content_part.done", ...at2, part });
    } else {
      emit({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      emit({
        type: "response.function_call_arguments.delta",
        ...at,
        delta: item.arguments,
        obfuscation: "q",
      });
      emit({
        type: "response.function_call_arguments.done",
        ...at,
        name: item.name,
        arguments: item.arguments,
      });
    }
    emit({ type: "response.output_item.done", output_index: outputIndex, item });
  });
  emit({
    type: response.status === "incomplete" ? "response.incomplete" : "response.completed",
    response,
  });
  return events;
}
