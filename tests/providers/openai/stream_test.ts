/** Chat completion chunks → canonical events, for the shapes OpenAI and compatible servers
 * stream. */
import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ApiError } from "../../../src/errors.ts";
import { OpenAIStreamTranslator } from "../../../src/providers/openai/stream.ts";
import { assembleEvents } from "../../support/provider_call.ts";

/** The events for `chunks`, then the closing ones (as at `[DONE]`). */
function translate(chunks: Record<string, unknown>[]): CanonicalEvent[] {
  const translator = new OpenAIStreamTranslator();
  const events: CanonicalEvent[] = [];
  for (const chunk of chunks) translator.push(chunk, events);
  return [...events, ...translator.end()];
}

const c = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-9",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "upstream-name",
  choices,
  ...extra,
});
const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  c([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

Deno.test("OpenAIStreamTranslator: a text answer (OpenAI's shape), extras on start", () => {
  const events = translate([
    c(
      [{ index: 0, delta: { role: "assistant", content: "", refusal: null }, finish_reason: null }],
      {
        system_fingerprint: "fp_1",
        service_tier: "default",
        usage: null,
        obfuscation: "a1b2",
      },
    ),
    delta({ content: "Hel" }),
    delta({ content: "lo" }),
    delta({}, "stop"),
    c([], {
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      obfuscation: "x1",
    }),
  ]);
  assert.deepEqual(events, [
    {
      type: "start",
      id: "chatcmpl-9",
      extras: {
        protocol: "openai_chat",
        fields: { system_fingerprint: "fp_1", service_tier: "default" },
      },
    },
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "Hel" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "lo" } },
    { type: "block_stop", index: 0 },
    { type: "usage", usage: { input: 3, output: 2 } },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("OpenAIStreamTranslator: no role, finish and usage on the last text chunk (vLLM, Ollama)", () => {
  const events = translate([
    c([{ index: 0, delta: { content: "Hel" }, finish_reason: null }]),
    c([{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }], {
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    }),
  ]);
  assert.deepEqual(assembleEvents(events), {
    parts: [{ type: "text", text: "Hello" }],
    finish: "stop",
    detail: undefined,
    usage: { input: 3, output: 2 },
  });
});

Deno.test("OpenAIStreamTranslator: the recorded gpt-4o-mini tool stream", () => {
  const events = translate([
    c([{
      index: 0,
      delta: {
        role: "assistant",
        content: null,
        tool_calls: [{
          index: 0,
          id: "call_F9Za",
          type: "function",
          function: { name: "GetPersonAge", arguments: "" },
        }],
        refusal: null,
      },
      logprobs: null,
      finish_reason: null,
    }], { usage: null }),
    c([{
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: '{"' } }] },
      finish_reason: null,
    }], { usage: null }),
    c([{
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: 'name":"Al"}' } }] },
      finish_reason: null,
    }], { usage: null }),
    c([{ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" }], { usage: null }),
    c([], { usage: { prompt_tokens: 61, completion_tokens: 16, total_tokens: 77 } }),
  ]);
  assert.deepEqual(events, [
    { type: "start", id: "chatcmpl-9" },
    {
      type: "block_start",
      index: 0,
      block: { type: "tool_call", id: "call_F9Za", name: "GetPersonAge" },
    },
    { type: "block_delta", index: 0, delta: { type: "arguments", json: '{"' } },
    { type: "block_delta", index: 0, delta: { type: "arguments", json: 'name":"Al"}' } },
    { type: "block_stop", index: 0 },
    { type: "usage", usage: { input: 61, output: 16 } },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("OpenAIStreamTranslator: whole tool calls in one chunk, without index or id, arguments as an object", () => {
  const events = translate([
    delta({ role: "assistant", content: "Checking." }),
    delta({
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "f", arguments: '{"x":1}' } },
        { function: { name: "g", arguments: { y: 2 } } },
      ],
    }, "tool_calls"),
  ]);
  const got = assembleEvents(events);
  const [text, a, b] = got.parts;
  assert.deepEqual(text, { type: "text", text: "Checking." });
  assert.deepEqual(a, { type: "tool_call", id: "call_a", name: "f", arguments: '{"x":1}' });
  assert.ok(b?.type === "tool_call" && /^call_\w{24}$/.test(b.id));
  assert.equal(b.arguments, '{"y":2}');
  assert.equal(got.finish, "tool_calls");
  assert.deepEqual(got.usage, { input: 0, output: 0 });
});

Deno.test("OpenAIStreamTranslator: whole calls without index in successive chunks (older Ollama) are separate calls", () => {
  const whole = (id: string, name: string) => ({ id, function: { name, arguments: { n: id } } });
  const events = translate([
    delta({ role: "assistant", content: "", tool_calls: [whole("call_x", "f")] }),
    delta({ tool_calls: [whole("call_y", "g")] }),
    delta({}, "stop"),
  ]);
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [
    { type: "tool_call", id: "call_x", name: "f", arguments: '{"n":"call_x"}' },
    { type: "tool_call", id: "call_y", name: "g", arguments: '{"n":"call_y"}' },
  ]);
  assert.equal(got.finish, "stop", "as the upstream said");
});

Deno.test("OpenAIStreamTranslator: fragments without index or id continue the call being written", () => {
  const events = translate([
    delta({
      role: "assistant",
      tool_calls: [{
        id: "call_1",
        type: "function",
        function: { name: "weather", arguments: '{"city":' },
      }],
    }),
    delta({ tool_calls: [{ function: { arguments: '"Oslo"}' } }] }),
    delta({
      tool_calls: [{ id: "call_2", type: "function", function: { name: "time", arguments: "" } }],
    }),
    delta({ tool_calls: [{ function: { arguments: "{}" } }] }),
    delta({}, "tool_calls"),
  ]);
  assert.deepEqual(assembleEvents(events).parts, [
    { type: "tool_call", id: "call_1", name: "weather", arguments: '{"city":"Oslo"}' },
    { type: "tool_call", id: "call_2", name: "time", arguments: "{}" },
  ]);
});

Deno.test("OpenAIStreamTranslator: parallel calls' fragments may interleave; a repeated header is one call", () => {
  const call = (index: number, args: string, header = false) => ({
    index,
    ...(header ? { id: `call_${index}`, type: "function" } : {}),
    function: { ...(header ? { name: `f${index}` } : {}), arguments: args },
  });
  const events = translate([
    delta({ tool_calls: [call(0, "", true)] }),
    delta({ tool_calls: [call(1, '{"b"', true)] }),
    delta({ tool_calls: [call(0, '{"a":0}')] }),
    delta({ tool_calls: [call(1, ":1}", true)] }),
    delta({}, "tool_calls"),
  ]);
  assert.deepEqual(assembleEvents(events).parts, [
    { type: "tool_call", id: "call_0", name: "f0", arguments: '{"a":0}' },
    { type: "tool_call", id: "call_1", name: "f1", arguments: '{"b":1}' },
  ]);
});

Deno.test("OpenAIStreamTranslator: reasoning_content (DeepSeek) then text: two blocks", () => {
  const events = translate([
    delta({ role: "assistant", content: null, reasoning_content: "" }),
    delta({ content: null, reasoning_content: "Two and " }),
    delta({ content: null, reasoning_content: "two." }),
    delta({ content: "", reasoning_content: null }),
    delta({ content: "4", reasoning_content: null }),
    delta({ content: "", reasoning_content: null }, "stop"),
    c([], {
      usage: {
        prompt_tokens: 9,
        completion_tokens: 5,
        total_tokens: 14,
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    }),
  ]);
  assert.deepEqual(events.slice(1, 7), [
    { type: "block_start", index: 0, block: { type: "reasoning", style: "openai" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "Two and " } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "two." } },
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "text" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: "4" } },
  ]);
  assert.deepEqual(assembleEvents(events).usage, { input: 9, output: 5, reasoning: 3 });
});

Deno.test("OpenAIStreamTranslator: reasoning (OpenRouter, Ollama), then a tool call", () => {
  const events = translate([
    delta({ role: "assistant", content: "", reasoning: "Need weather." }),
    delta({
      content: "",
      tool_calls: [{ index: 0, id: "c1", function: { name: "get_weather", arguments: "{}" } }],
    }),
    delta({}, "tool_calls"),
  ]);
  assert.deepEqual(assembleEvents(events).parts, [
    { type: "reasoning", text: "Need weather.", style: "openai" },
    { type: "tool_call", id: "c1", name: "get_weather", arguments: "{}" },
  ]);
});

Deno.test("OpenAIStreamTranslator: a refusal streams as a refusal block, each piece with its logprobs", () => {
  const lp = (token: string) => ({ token, logprob: -1, bytes: [], top_logprobs: [] });
  const events = translate([
    delta({ role: "assistant", content: null, refusal: "" }),
    c([{
      index: 0,
      delta: { refusal: "I can't" },
      logprobs: { content: null, refusal: [lp("I"), lp(" can't")] },
      finish_reason: null,
    }]),
    c([{
      index: 0,
      delta: { refusal: " help." },
      logprobs: { content: null, refusal: [lp(" help.")] },
      finish_reason: null,
    }]),
    delta({}, "stop"),
  ]);
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [{ type: "refusal", text: "I can't help." }]);
  assert.deepEqual(
    events.flatMap((e) => e.type === "block_delta" ? [e.delta] : []),
    [
      { type: "refusal", text: "I can't", logprobs: [lp("I"), lp(" can't")] },
      { type: "refusal", text: " help.", logprobs: [lp(" help.")] },
    ],
  );
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop" }, "none left for the finish");
});

Deno.test("OpenAIStreamTranslator: text pieces carry their chunk's logprobs; what no piece took goes with the finish", () => {
  const lp = (token: string) => ({ token, logprob: -0.5, bytes: [1], top_logprobs: [] });
  const events = translate([
    // vLLM's first chunk: no text, empty lists (nothing to give).
    c([{
      index: 0,
      delta: { role: "assistant", content: "" },
      logprobs: { content: [], refusal: null },
      finish_reason: null,
    }]),
    // Reasoning and text in one chunk: the logprobs are the text's.
    c([{
      index: 0,
      delta: { reasoning_content: "Hm.", content: "Hi" },
      logprobs: { content: [lp("Hi")], refusal: null },
      finish_reason: null,
    }]),
    c([{
      index: 0,
      delta: { content: " there" },
      logprobs: { content: [lp(" there")], refusal: null },
      finish_reason: null,
    }]),
    // A server that gives the last token's logprobs with the finish, without text.
    c([{ index: 0, delta: {}, logprobs: { content: [lp("!")] }, finish_reason: "stop" }]),
  ]);
  assert.deepEqual(
    events.flatMap((e) => e.type === "block_delta" ? [e.delta] : []),
    [
      { type: "reasoning", text: "Hm." },
      { type: "text", text: "Hi", logprobs: [lp("Hi")] },
      { type: "text", text: " there", logprobs: [lp(" there")] },
    ],
  );
  assert.deepEqual(events.at(-1), {
    type: "finish",
    reason: "stop",
    extras: {
      protocol: "openai_chat",
      fields: { choices: [{ logprobs: { content: [lp("!")], refusal: null } }] },
    },
  });
});

Deno.test("OpenAIStreamTranslator: the finish carries usage details, annotations and late fields", () => {
  const annotation = { type: "url_citation", url_citation: { url: "https://example.com" } };
  const events = translate([
    delta({ role: "assistant", content: "See" }),
    delta({ content: " this", annotations: [annotation] }),
    delta({}, "stop"),
    c([], {
      usage: {
        prompt_tokens: 10,
        completion_tokens: 2,
        total_tokens: 12,
        prompt_tokens_details: { cached_tokens: 8, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, accepted_prediction_tokens: 0 },
      },
      provider: "Azure",
    }),
  ]);
  assert.deepEqual(events.slice(-2), [
    { type: "usage", usage: { input: 10, output: 2, cachedInput: 8, reasoning: 0 } },
    {
      type: "finish",
      reason: "stop",
      extras: {
        protocol: "openai_chat",
        fields: {
          provider: "Azure",
          usage: {
            prompt_tokens_details: { audio_tokens: 0 },
            completion_tokens_details: { accepted_prediction_tokens: 0 },
          },
          choices: [{ delta: { annotations: [annotation] } }],
        },
      },
    },
  ]);
});

Deno.test("OpenAIStreamTranslator: choice-less chunks (Azure prompt filter results) and other choices", () => {
  const events = translate([
    c([], { prompt_filter_results: [{ prompt_index: 0 }] }),
    delta({ role: "assistant", content: "" }),
    c([{ index: 1, delta: { content: "other" }, finish_reason: null }]),
    c([{ index: 0, delta: { content: "x" }, finish_reason: null }]),
    c([{ index: 0, delta: null, finish_reason: null }, { index: 0 }]),
    delta({}, "length"),
  ]);
  assert.deepEqual(events[0], {
    type: "start",
    id: "chatcmpl-9",
    extras: { protocol: "openai_chat", fields: { prompt_filter_results: [{ prompt_index: 0 }] } },
  });
  const got = assembleEvents(events);
  assert.deepEqual(got.parts, [{ type: "text", text: "x" }]);
  assert.equal(got.finish, "length");
});

Deno.test("OpenAIStreamTranslator: text after a tool call closes the call; its late arguments are a 502", () => {
  const translator = new OpenAIStreamTranslator();
  const out: CanonicalEvent[] = [];
  translator.push(delta({ tool_calls: [{ index: 0, id: "c", function: { name: "f" } }] }), out);
  translator.push(delta({ content: "Also" }), out);
  assert.deepEqual(out.slice(2), [
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "text" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: "Also" } },
  ]);
  assert.throws(
    () =>
      translator.push(delta({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }), out),
    (e) => e instanceof ApiError && e.status === 502,
  );
});

Deno.test("OpenAIStreamTranslator: nothing before the end is an empty answer", () => {
  const translator = new OpenAIStreamTranslator();
  assert.equal(translator.finished, false);
  assert.deepEqual(translator.end(), [
    { type: "start" },
    { type: "usage", usage: { input: 0, output: 0 } },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("OpenAIStreamTranslator: malformed chunks are a 502", () => {
  for (
    const chunk of [
      c(["text"]),
      delta({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }),
      delta({ tool_calls: ["x"] }),
    ]
  ) {
    assert.throws(
      () => new OpenAIStreamTranslator().push(chunk, []),
      (e) => e instanceof ApiError && e.status === 502,
      JSON.stringify(chunk),
    );
  }
});
