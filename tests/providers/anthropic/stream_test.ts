import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ApiError } from "../../../src/errors.ts";
import { SseDecoderStream } from "../../../src/http/sse.ts";
import { AnthropicStreamTranslator } from "../../../src/providers/anthropic/stream.ts";
import { assembleEvents } from "../../support/provider_call.ts";

/** The stream of the Anthropic SDK's own fixture: a text block, then a tool_use block at
 * content index 1, with a ping in between and the input in JSON fragments. */
const SDK_STREAM = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01abc","type":"message","role":"assistant","model":"claude-3-5-haiku","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":377,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll check…"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"locati"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"on\\": \\"SF\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":65}}

event: message_stop
data: {"type":"message_stop"}

`;

/** The canonical events for an SSE text, fed in one piece. */
async function translate(sse: string, jsonTool: string | null = null): Promise<CanonicalEvent[]> {
  const translator = new AnthropicStreamTranslator(jsonTool);
  const events = ReadableStream.from([new TextEncoder().encode(sse)])
    .pipeThrough(new SseDecoderStream());
  const out: CanonicalEvent[] = [];
  let done = false;
  for await (const event of events) {
    assert.equal(done, false, "an event after message_stop");
    done = translator.push(JSON.parse(event.data), out);
  }
  assert.equal(done, true);
  return out;
}

Deno.test("AnthropicStreamTranslator turns the SDK's fixture into exact canonical events", async () => {
  const events = await translate(SDK_STREAM);
  assert.deepEqual(events, [
    { type: "start", id: "msg_01abc" },
    { type: "usage", usage: { input: 377, output: 1 } },
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "I'll check…" } },
    { type: "block_stop", index: 0 },
    {
      type: "block_start",
      index: 1,
      block: { type: "tool_call", id: "toolu_01T1x", name: "get_weather" },
    },
    { type: "block_delta", index: 1, delta: { type: "arguments", json: '{"locati' } },
    { type: "block_delta", index: 1, delta: { type: "arguments", json: 'on": "SF"}' } },
    { type: "block_stop", index: 1 },
    { type: "usage", usage: { input: 377, output: 65 } },
    { type: "finish", reason: "tool_calls" },
  ]);
  assembleEvents(events);
});

function sse(...data: unknown[]): string {
  return data.map((d) => `event: ${(d as { type: string }).type}\ndata: ${JSON.stringify(d)}\n\n`)
    .join("");
}

const START = {
  type: "message_start",
  message: {
    id: "msg_2",
    type: "message",
    role: "assistant",
    model: "c",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      cache_read_input_tokens: 5,
      cache_creation_input_tokens: 0,
      output_tokens: 1,
    },
  },
};
const STOP = (reason: string, output: number, delta: Record<string, unknown> = {}) => [
  {
    type: "message_delta",
    delta: { stop_reason: reason, stop_sequence: null, ...delta },
    usage: { output_tokens: output },
  },
  { type: "message_stop" },
];

/** The events of one block at content index `index`. */
function block(
  index: number,
  start: Record<string, unknown>,
  ...deltas: Record<string, unknown>[]
) {
  return [
    { type: "content_block_start", index, content_block: start },
    ...deltas.map((delta) => ({ type: "content_block_delta", index, delta })),
    { type: "content_block_stop", index },
  ];
}

/** The events of one tool_use block, its input in `fragments`. */
function toolBlock(index: number, id: string, name: string, ...fragments: string[]) {
  return block(
    index,
    { type: "tool_use", id, name, input: {} },
    ...fragments.map((partial_json) => ({ type: "input_json_delta", partial_json })),
  );
}

const THINKING = block(
  0,
  { type: "thinking", thinking: "", signature: "" },
  { type: "thinking_delta", thinking: "Let me " },
  { type: "thinking_delta", thinking: "think." },
  { type: "signature_delta", signature: "EqQBCgIYAhIM1gbcDa9" },
);

Deno.test("AnthropicStreamTranslator: thinking → reasoning deltas and the signature", async () => {
  const events = await translate(sse(
    START,
    ...THINKING,
    ...block(1, { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" }),
    ...block(2, { type: "text", text: "" }, { type: "text_delta", text: "Hi" }),
    ...STOP("end_turn", 30),
  ));
  assert.deepEqual(events.slice(2, 9), [
    { type: "block_start", index: 0, block: { type: "reasoning", style: "anthropic" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Let me " } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "think." } },
    {
      type: "block_delta",
      index: 0,
      delta: { type: "signature", signature: "EqQBCgIYAhIM1gbcDa9" },
    },
    { type: "block_stop", index: 0 },
    {
      type: "block_start",
      index: 1,
      block: { type: "reasoning", redacted: "EmwKAhgBEgy3va3pzix", style: "anthropic" },
    },
    { type: "block_stop", index: 1 },
  ]);
  assert.deepEqual(assembleEvents(events).parts, [
    {
      type: "reasoning",
      text: "Let me think.",
      signature: "EqQBCgIYAhIM1gbcDa9",
      style: "anthropic",
    },
    { type: "reasoning", text: "", redacted: "EmwKAhgBEgy3va3pzix", style: "anthropic" },
    { type: "text", text: "Hi" },
  ]);
});

Deno.test("AnthropicStreamTranslator: the forced JSON tool streams as text, finish stop", async () => {
  const events = await translate(
    sse(
      START,
      ...toolBlock(0, "toolu_1", "json_output", "", '{"a":', "1}"),
      ...STOP("tool_use", 9),
    ),
    "json_output",
  );
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [{ type: "text", text: '{"a":1}' }]);
  assert.equal(got.finish, "stop");
  const empty = await translate(
    sse(START, ...toolBlock(0, "toolu_1", "json_output"), ...STOP("tool_use", 9)),
    "json_output",
  );
  assert.deepEqual(assembleEvents(empty).parts, [{ type: "text", text: "{}" }]);
});

Deno.test("AnthropicStreamTranslator: a tool_use with no input deltas gets `{}` arguments", async () => {
  const events = await translate(sse(
    START,
    ...toolBlock(0, "t1", "now"),
    ...toolBlock(1, "t2", "now", ""),
    ...STOP("tool_use", 12),
  ));
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [
    { type: "tool_call", id: "t1", name: "now", arguments: "{}" },
    { type: "tool_call", id: "t2", name: "now", arguments: "{}" },
  ]);
  assert.deepEqual(got.usage, { input: 15, output: 12, cachedInput: 5, cacheWrite: 0 });
});

Deno.test("AnthropicStreamTranslator skips blocks it has no form for, numbering its own", async () => {
  const events = await translate(sse(
    START,
    ...block(
      0,
      { type: "server_tool_use", id: "srv_1", name: "web_search", input: {} },
      { type: "input_json_delta", partial_json: '{"q":1}' },
    ),
    { type: "some_future_event", anything: true },
    ...block(
      1,
      { type: "text", text: "" },
      { type: "text_delta", text: "Hi" },
      { type: "citations_delta", citation: {} },
    ),
    ...toolBlock(2, "a", "f", '{"x":', "1}"),
    ...toolBlock(3, "b", "g", '{"y":2}'),
    ...STOP("tool_use", 30),
  ));
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [
    { type: "text", text: "Hi" },
    { type: "tool_call", id: "a", name: "f", arguments: '{"x":1}' },
    { type: "tool_call", id: "b", name: "g", arguments: '{"y":2}' },
  ]);
  assert.equal(got.finish, "tool_calls");
});

Deno.test("AnthropicStreamTranslator maps stop reasons, details and extras on finish", async () => {
  const finish = async (reason: string, delta: Record<string, unknown> = {}) =>
    (await translate(sse(START, ...STOP(reason, 3, delta)))).at(-1);
  assert.deepEqual(await finish("end_turn"), { type: "finish", reason: "stop" });
  assert.deepEqual(await finish("max_tokens"), { type: "finish", reason: "length" });
  assert.deepEqual(await finish("pause_turn"), {
    type: "finish",
    reason: "pause",
    detail: "pause_turn",
  });
  assert.deepEqual(
    await finish("refusal", { stop_details: { type: "refusal", category: "cyber" } }),
    {
      type: "finish",
      reason: "content_filter",
      detail: "refusal",
      extras: {
        protocol: "anthropic_messages",
        fields: { stop_details: { type: "refusal", category: "cyber" } },
      },
    },
  );
  assert.deepEqual(await finish("stop_sequence", { stop_sequence: "END" }), {
    type: "finish",
    reason: "stop",
    extras: { protocol: "anthropic_messages", fields: { stop_sequence: "END" } },
  });
});

Deno.test("AnthropicStreamTranslator: usage is cumulative, with the cache counts in the input", async () => {
  const events = await translate(sse(
    START,
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 5,
        cache_creation_input_tokens: 20,
        output_tokens: 7,
      },
    },
    { type: "message_stop" },
  ));
  assert.deepEqual(assembleEvents(events).usage, {
    input: 35,
    output: 7,
    cachedInput: 5,
    cacheWrite: 20,
  });
});

Deno.test("AnthropicStreamTranslator: events out of order are a 502", () => {
  const is502 = (e: unknown) => e instanceof ApiError && e.status === 502;
  const translator = new AnthropicStreamTranslator(null);
  const out: CanonicalEvent[] = [];
  const delta = (index: number, d: Record<string, unknown>) =>
    translator.push({ type: "content_block_delta", index, delta: d }, out);
  assert.throws(() => delta(0, { type: "text_delta", text: "x" }), is502);
  translator.push(START, out);
  assert.throws(() => delta(4, { type: "input_json_delta", partial_json: "{" }), is502);
  translator.push({ type: "content_block_start", index: 0, content_block: { type: "text" } }, out);
  assert.throws(() => delta(0, { type: "input_json_delta", partial_json: "{" }), is502);
  assert.throws(() => delta(0, { type: "thinking_delta", thinking: "x" }), is502);
  assert.throws(() => translator.push(START, out), is502);
});
