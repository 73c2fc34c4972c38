/**
 * One suite of conversations run against both upstream styles, calling the adapters directly:
 * the fakes check every request they receive against the provider's documented format, and
 * the adapters must give the same public results from either.
 */
import assert from "node:assert/strict";
import type { Provider } from "../../src/providers/types.ts";
import type { ChatCompletion, ChatRequest, Tool } from "../../src/types/openai.ts";
import {
  assemble,
  assertStreamContract,
  callContext,
  chatRequest,
  collect,
} from "../support/provider_call.ts";
import { STYLES } from "../support/provider_styles.ts";
import { dataUrl, pngBytes } from "../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;

const WEATHER: Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** Runs a request both ways (non-stream and stream) and checks they agree. */
async function both(provider: Provider, req: ChatRequest): Promise<ChatCompletion> {
  const completion = await provider.chat(req, callContext());
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.model, "gw-model");
  assert.match(completion.id, /^chatcmpl-/);
  assert.ok(Number.isInteger(completion.created));
  const u = completion.usage;
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);

  const chunks = await collect(provider.chatStream({ ...req, stream: true }, callContext()));
  assertStreamContract(chunks, "gw-model");
  const streamed = assemble(chunks);
  const message = completion.choices[0]!.message;
  assert.equal(streamed.content, message.content ?? "");
  assert.equal(streamed.finish, completion.choices[0]!.finish_reason);
  assert.deepEqual(streamed.usage, completion.usage);
  // Same calls (the fakes number their ids per call, so only the id format is compared).
  assert.deepEqual(
    streamed.calls.map((c) => ({ ...c, id: c.id.replace(/\d+$/, "") })),
    (message.tool_calls ?? []).map((c) => ({
      id: c.id.replace(/\d+$/, ""),
      name: c.function.name,
      arguments: c.function.arguments,
    })),
  );
  return completion;
}

for (const style of STYLES) {
  Deno.test(`${style.name} adapter: a plain conversation`, async () => {
    await using fake = style.start();
    const provider = style.make(fake.url, fake.apiKey).provider;
    const completion = await both(
      provider,
      chatRequest({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hello there" },
        ],
      }),
    );
    assert.deepEqual(completion.choices, [{
      index: 0,
      message: { role: "assistant", content: "You said: Hello there", refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }]);
    assert.deepEqual(completion.usage, { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
    assert.deepEqual(fake.violations, []);
    assert.equal((fake.last.body as { model: string }).model, "upstream-model-v1");
  });

  Deno.test(`${style.name} adapter: two parallel tool calls`, async () => {
    await using fake = style.start();
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        messages: [{ role: "user", content: "Use get_weather for Paris and Tokyo" }],
        tools: [WEATHER],
        tool_choice: "auto",
      }),
    );
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls ?? [];
    assert.deepEqual(
      calls.map((c) => [c.type, c.function.name, JSON.parse(c.function.arguments)]),
      [
        ["function", "get_weather", { city: "Paris" }],
        ["function", "get_weather", { city: "Tokyo" }],
      ],
    );
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: text before tool calls keeps tool indexes 0 and 1`, async () => {
    await using fake = style.start();
    fake.script = () => ({
      text: "Let me check both.",
      toolCalls: [
        { name: "get_weather", arguments: { city: "Oslo" } },
        { name: "get_weather", arguments: { city: "Rome" } },
      ],
    });
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({ messages: [{ role: "user", content: "Weather?" }], tools: [WEATHER] }),
    );
    assert.equal(completion.choices[0]!.message.content, "Let me check both.");
    assert.equal(completion.choices[0]!.message.tool_calls?.length, 2);
  });

  Deno.test(`${style.name} adapter: a tool round trip`, async () => {
    await using fake = style.start();
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        tools: [WEATHER],
        messages: [
          { role: "developer", content: "Use tools." },
          { role: "user", content: "Use get_weather for Paris and Tokyo" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
              {
                id: "call_b",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Tokyo"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_a", content: "18C and sunny" },
          { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "25C" }] },
        ],
      }),
    );
    assert.equal(completion.choices[0]!.message.content, "Tool results: 18C and sunny; 25C");
    assert.equal(completion.choices[0]!.finish_reason, "stop");
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: image input`, async () => {
    await using fake = style.start();
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
          ],
        }],
      }),
    );
    assert.equal(
      completion.choices[0]!.message.content,
      `You said: What is this? I see an image/png image of ${pngBytes(1, 1).length} bytes.`,
    );
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: a stop sequence ends the text`, async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three END four five", toolCalls: [] });
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({ stop: ["END", "NEVER"] }),
    );
    assert.equal(completion.choices[0]!.message.content, "one two three ");
    assert.equal(completion.choices[0]!.finish_reason, "stop");
    assert.equal(completion.usage.completion_tokens, 3);
  });

  Deno.test(`${style.name} adapter: max_tokens ends the text with length`, async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three four five", toolCalls: [] });
    const completion = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({ max_tokens: 2 }),
    );
    assert.equal(completion.choices[0]!.message.content, "one two ");
    assert.equal(completion.choices[0]!.finish_reason, "length");
    assert.equal(completion.usage.completion_tokens, 2);
  });

  Deno.test(`${style.name} adapter: unicode survives a stream written 3 bytes at a time`, async () => {
    await using fake = style.start({ sliceBytes: 3 });
    const text = "héllo wörld 🌍 世界 ✓ «fin»";
    fake.script = () => ({
      text,
      toolCalls: [{ name: "get_weather", arguments: { city: "Zürich 🏔" } }],
    });
    const provider = style.make(fake.url, fake.apiKey).provider;
    const req = chatRequest({ stream: true, tools: [WEATHER] });
    const chunks = await collect(provider.chatStream(req, callContext()));
    assertStreamContract(chunks, "gw-model");
    const got = assemble(chunks);
    assert.equal(got.content, text);
    assert.deepEqual(JSON.parse(got.calls[0]!.arguments), { city: "Zürich 🏔" });
    assert.ok(chunks.length > 8);
  });
}
