import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ResultCollector } from "../../../src/canonical/result_collector.ts";
import { renderOutput, type ResponseHead } from "../../../src/api/responses/output.ts";
import { parseResponsesRequest } from "../../../src/api/responses/request.ts";
import { ResponsesStreamRenderer } from "../../../src/api/responses/stream.ts";
import { decodeReasoning } from "../../../src/api/responses/reasoning_envelope.ts";
import { ToolMap } from "../../../src/api/responses/tool_map.ts";
import { upstreamError } from "../../../src/errors.ts";

type Event = Record<string, unknown> & { type: string; sequence_number: number };

const HEAD: ResponseHead = {
  id: "resp_abc",
  createdAt: 1,
  model: "m",
  previousResponseId: null,
  store: true,
  echo: parseResponsesRequest({ model: "m", input: "x" }).echo,
  tools: new ToolMap(),
};

/** Renders the batches as the route does (the collector first); the SSE events parsed. */
function render(batches: CanonicalEvent[][], include = true) {
  const collector = new ResultCollector();
  const renderer = new ResponsesStreamRenderer(HEAD, include, collector, () => 5000);
  let text = "";
  const decoder = new TextDecoder();
  for (const batch of batches) {
    collector.add(batch);
    const bytes = renderer.render(batch);
    if (bytes) text += decoder.decode(bytes);
  }
  return { renderer, collector, text, events: parse(text) };
}

function parse(text: string): Event[] {
  return text.split("\n\n").filter((b) => b !== "").map((block) => {
    const [eventLine, dataLine] = block.split("\n");
    const event = JSON.parse(dataLine!.slice("data: ".length)) as Event;
    assert.equal(eventLine, `event: ${event.type}`);
    return event;
  });
}

const ANSWER: CanonicalEvent[][] = [
  [{ type: "start", id: "up1" }],
  [
    { type: "block_start", index: 0, block: { type: "reasoning", style: "anthropic" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Let me " } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "think." } },
    { type: "block_delta", index: 0, delta: { type: "signature", signature: "sig" } },
    { type: "block_stop", index: 0 },
  ],
  [
    { type: "block_start", index: 1, block: { type: "text" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: "Hello" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: " there" } },
    { type: "block_stop", index: 1 },
    { type: "block_start", index: 2, block: { type: "tool_call", id: "c1", name: "f" } },
    { type: "block_delta", index: 2, delta: { type: "arguments", json: '{"a":' } },
    { type: "block_delta", index: 2, delta: { type: "arguments", json: "1}" } },
    { type: "block_stop", index: 2 },
  ],
  [
    { type: "usage", usage: { input: 3, output: 7, reasoning: 2 } },
    { type: "finish", reason: "tool_calls" },
  ],
];

Deno.test("events in OpenAI's order, numbered from 0, ids as the final Response's", () => {
  const { events, collector, renderer } = render(ANSWER);
  assert.deepEqual(events.map((e) => e.type), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
  const final = events.at(-1)!.response as Record<string, unknown>;
  assert.deepEqual(final.output, done);
  assert.deepEqual(final.output, renderOutput(collector.parts, "resp_abc", HEAD.tools, true));
  assert.equal(final.status, "completed");
  assert.equal(final.completed_at, 5);
  assert.deepEqual(final.usage, {
    input_tokens: 3,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 2 },
    total_tokens: 10,
  });
  const reasoning = done[0] as { encrypted_content: string };
  assert.deepEqual(decodeReasoning(reasoning.encrypted_content, ""), {
    type: "reasoning",
    text: "Let me think.",
    signature: "sig",
    style: "anthropic",
  });
  assert.deepEqual(renderer.end(), new Uint8Array());
});

Deno.test("encrypted content only when included; a cut answer is incomplete", () => {
  const { events } = render([
    [
      { type: "block_start", index: 0, block: { type: "reasoning" } },
      { type: "block_delta", index: 0, delta: { type: "reasoning", text: "hm" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "cut" } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "length" },
    ],
  ], false);
  const final = events.at(-1)!;
  assert.equal(final.type, "response.incomplete");
  const response = final.response as Record<string, unknown>;
  assert.equal(response.status, "incomplete");
  assert.deepEqual(response.incomplete_details, { reason: "max_output_tokens" });
  const [reasoning, message] = response.output as Record<string, unknown>[];
  assert.equal("encrypted_content" in reasoning!, false);
  assert.equal(message!.status, "incomplete");
});

Deno.test("a failure mid-stream is response.failed with the error (an unfinished end: tests/http/sse_response_test.ts)", () => {
  const { renderer, events } = render([[
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "par" } },
  ]]);
  const failed = parse(new TextDecoder().decode(renderer.error(upstreamError("boom"))));
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.type, "response.failed");
  assert.equal(failed[0]!.sequence_number, events.length);
  const response = failed[0]!.response as Record<string, unknown>;
  assert.equal(response.status, "failed");
  assert.deepEqual(response.error, { code: "server_error", message: "boom" });
});

Deno.test("a function call cut short by the token limit is incomplete in its event and the Response", () => {
  const { events } = render([
    [
      { type: "block_start", index: 0, block: { type: "tool_call", id: "c1", name: "f" } },
      { type: "block_delta", index: 0, delta: { type: "arguments", json: "{" } },
      { type: "block_stop", index: 0 },
    ],
    [{ type: "finish", reason: "length" }],
  ]);
  assert.deepEqual(events.map((e) => e.type), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.incomplete",
  ]);
  const done = events[5]!.item as Record<string, unknown>;
  assert.equal(done.status, "incomplete");
  const response = events.at(-1)!.response as Record<string, unknown>;
  assert.deepEqual(response.output, [done]);
});

Deno.test("parallel function calls: each is completed once the next begins", () => {
  const call = (index: number, id: string): CanonicalEvent[] => [
    { type: "block_start", index, block: { type: "tool_call", id, name: "f" } },
    { type: "block_delta", index, delta: { type: "arguments", json: "{}" } },
    { type: "block_stop", index },
  ];
  const { events } = render([[...call(0, "c1"), ...call(1, "c2")], [{
    type: "finish",
    reason: "tool_calls",
  }]]);
  const done = events.filter((e) => e.type === "response.output_item.done");
  assert.deepEqual(done.map((e) => [e.output_index, (e.item as { status: string }).status]), [
    [0, "completed"],
    [1, "completed"],
  ]);
  assert.deepEqual(
    (events.at(-1)!.response as { output: unknown[] }).output,
    done.map((e) => e.item),
  );
});

Deno.test("calls of namespaced and custom tools stream as the request declared them", () => {
  const tools = new ToolMap();
  tools.add({ kind: "custom", name: "apply_patch" });
  const spawn = tools.add({ kind: "function", name: "spawn_agent", namespace: "multi_agent_v1" });
  const collector = new ResultCollector();
  const renderer = new ResponsesStreamRenderer({ ...HEAD, tools }, false, collector, () => 5000);
  const batches: CanonicalEvent[][] = [
    [{ type: "start", id: "up1" }],
    [
      { type: "block_start", index: 0, block: { type: "tool_call", id: "c1", name: spawn } },
      { type: "block_delta", index: 0, delta: { type: "arguments", json: '{"task":' } },
      { type: "block_delta", index: 0, delta: { type: "arguments", json: '"x"}' } },
      { type: "block_stop", index: 0 },
      {
        type: "block_start",
        index: 1,
        block: { type: "tool_call", id: "c2", name: "apply_patch" },
      },
      { type: "block_delta", index: 1, delta: { type: "arguments", json: '{"input":"*** Be' } },
      { type: "block_delta", index: 1, delta: { type: "arguments", json: 'gin Patch"}' } },
      { type: "block_stop", index: 1 },
    ],
    [{ type: "finish", reason: "tool_calls" }],
  ];
  let text = "";
  for (const batch of batches) {
    collector.add(batch);
    const bytes = renderer.render(batch);
    if (bytes) text += new TextDecoder().decode(bytes);
  }
  const events = parse(text);
  assert.deepEqual(events.map((e) => e.type), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.equal(events[5]!.name, "spawn_agent");
  assert.equal(events[9]!.input, "*** Begin Patch");
  const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
  assert.deepEqual(done, [
    {
      id: "fc_abc0000",
      type: "function_call",
      status: "completed",
      arguments: '{"task":"x"}',
      call_id: "c1",
      namespace: "multi_agent_v1",
      name: "spawn_agent",
    },
    {
      id: "ctc_abc0001",
      type: "custom_tool_call",
      call_id: "c2",
      name: "apply_patch",
      input: "*** Begin Patch",
    },
  ]);
  const final = events.at(-1)!.response as Record<string, unknown>;
  assert.deepEqual(final.output, done);
});
