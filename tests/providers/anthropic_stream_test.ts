import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { SseDecoderStream } from "../../src/http/sse.ts";
import { AnthropicStreamTranslator } from "../../src/providers/anthropic_stream.ts";
import type { ChatChunk } from "../../src/types/openai.ts";
import { assemble, assertStreamContract } from "../support/provider_call.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

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

async function translate(sse: string): Promise<ChatChunk[]> {
  const translator = new AnthropicStreamTranslator("claude-gw", NOW);
  const events = ReadableStream.from([new TextEncoder().encode(sse)])
    .pipeThrough(new SseDecoderStream());
  const chunks: ChatChunk[] = [];
  for await (const event of events) chunks.push(...translator.push(JSON.parse(event.data)));
  assert.equal(translator.done, true);
  return chunks;
}

Deno.test("AnthropicStreamTranslator turns the SDK's fixture into exact OpenAI chunks", async () => {
  const chunks = await translate(SDK_STREAM);
  const base = {
    id: "chatcmpl-01abc",
    object: "chat.completion.chunk",
    created: NOW / 1000,
    model: "claude-gw",
  };
  const delta = (d: unknown) => ({
    ...base,
    choices: [{ index: 0, delta: d, logprobs: null, finish_reason: null }],
  });
  assert.deepEqual(chunks, [
    delta({ role: "assistant", content: "" }),
    delta({ content: "I'll check…" }),
    // The tool_use block is content block 1, but the first tool call: index 0.
    delta({
      tool_calls: [{
        index: 0,
        id: "toolu_01T1x",
        type: "function",
        function: { name: "get_weather", arguments: "" },
      }],
    }),
    delta({ tool_calls: [{ index: 0, function: { arguments: '{"locati' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'on": "SF"}' } }] }),
    {
      ...base,
      choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" }],
    },
    {
      ...base,
      choices: [],
      usage: { prompt_tokens: 377, completion_tokens: 65, total_tokens: 442 },
    },
  ]);
  assertStreamContract(chunks, "claude-gw");
});

function events(...data: unknown[]): string {
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
    usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 },
  },
};
const STOP = (reason: string, output: number) => [
  {
    type: "message_delta",
    delta: { stop_reason: reason, stop_sequence: null },
    usage: { output_tokens: output },
  },
  { type: "message_stop" },
];

/** The events of one tool_use block at content index `index`, its input in `fragments`. */
function toolBlock(index: number, id: string, name: string, ...fragments: string[]) {
  return [
    {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id, name, input: {} },
    },
    ...fragments.map((partial_json) => ({
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json },
    })),
    { type: "content_block_stop", index },
  ];
}

Deno.test("AnthropicStreamTranslator: a tool_use with no input deltas gets `{}` arguments", async () => {
  const chunks = await translate(events(
    START,
    ...toolBlock(0, "t1", "now"),
    ...toolBlock(1, "t2", "now", ""),
    ...STOP("tool_use", 12),
  ));
  assertStreamContract(chunks, "claude-gw");
  const got = assemble(chunks);
  assert.deepEqual(got.calls, [
    { id: "t1", name: "now", arguments: "{}" },
    { id: "t2", name: "now", arguments: "{}" },
  ]);
  assert.deepEqual(got.usage, { prompt_tokens: 15, completion_tokens: 12, total_tokens: 27 });
});

Deno.test("AnthropicStreamTranslator skips thinking blocks and unknown events, keeps tool indexes", async () => {
  const chunks = await translate(events(
    START,
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "x" } },
    { type: "content_block_stop", index: 0 },
    { type: "some_future_event", anything: true },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hi" } },
    { type: "content_block_stop", index: 1 },
    ...toolBlock(2, "a", "f", '{"x":', "1}"),
    ...toolBlock(3, "b", "g", '{"y":2}'),
    ...STOP("tool_use", 30),
  ));
  assertStreamContract(chunks, "claude-gw");
  const got = assemble(chunks);
  assert.equal(got.content, "Hi");
  assert.deepEqual(got.calls, [
    { id: "a", name: "f", arguments: '{"x":1}' },
    { id: "b", name: "g", arguments: '{"y":2}' },
  ]);
  assert.equal(got.finish, "tool_calls");
});

Deno.test("AnthropicStreamTranslator maps stop reasons on the last chunk", async () => {
  for (
    const [reason, finish] of [["end_turn", "stop"], ["stop_sequence", "stop"], [
      "max_tokens",
      "length",
    ]]
  ) {
    const chunks = await translate(events(START, ...STOP(reason!, 3)));
    assertStreamContract(chunks, "claude-gw");
    assert.equal(assemble(chunks).finish, finish);
  }
});

Deno.test("AnthropicStreamTranslator: events out of order are a 502", () => {
  const translator = new AnthropicStreamTranslator("m", NOW);
  assert.throws(
    () =>
      translator.push({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "x" },
      }),
    (e) => e instanceof ApiError && e.status === 502,
  );
  translator.push(START);
  assert.throws(
    () =>
      translator.push({
        type: "content_block_delta",
        index: 4,
        delta: { type: "input_json_delta", partial_json: "{" },
      }),
    (e) => e instanceof ApiError && e.status === 502,
  );
});
