/**
 * One suite of conversations run against every upstream style, calling the adapters directly:
 * the fakes check every request they receive against the provider's documented format, and
 * the adapters must give the same canonical results from either, streamed or not.
 */
import assert from "node:assert/strict";
import type { CanonicalRequest, Part, ToolSpec } from "../../src/canonical/conversation.ts";
import type { CanonicalResult } from "../../src/canonical/result.ts";
import type { Provider } from "../../src/providers/types.ts";
import { assembleEvents, callContext, chatRequest, collect } from "../support/provider_call.ts";
import { STYLES } from "../support/provider_styles.ts";
import { dataUrl, pngBytes } from "../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;

const WEATHER: ToolSpec = {
  name: "get_weather",
  description: "Current weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const user = (text: string) => ({
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** Parts with the fakes' per-call numbering taken out of tool call ids (only their form is
 * compared between a call and a stream). */
const unnumbered = (parts: Part[]) =>
  parts.map((p) => p.type === "tool_call" ? { ...p, id: p.id.replace(/\d+$/, "") } : p);

/** Runs a request both ways (non-stream and stream) and checks they agree. */
async function both(provider: Provider, req: CanonicalRequest): Promise<CanonicalResult> {
  const result = await provider.chat(req, callContext());
  const streamed = assembleEvents(
    await collect(provider.chatStream({ ...req, stream: true }, callContext())),
  );
  assert.deepEqual(unnumbered(streamed.parts), unnumbered(result.parts));
  assert.equal(streamed.finish, result.finish);
  assert.deepEqual(streamed.usage, result.usage);
  return result;
}

const texts = (result: CanonicalResult) =>
  result.parts.flatMap((p) => p.type === "text" ? [p.text] : []).join("");
const calls = (result: CanonicalResult) =>
  result.parts.flatMap((p) =>
    p.type === "tool_call" ? [{ name: p.name, arguments: JSON.parse(p.arguments) }] : []
  );

for (const style of STYLES) {
  Deno.test(`${style.name} adapter: a plain conversation`, async () => {
    await using fake = style.start();
    const provider = style.make(fake.url, fake.apiKey).provider;
    const result = await both(
      provider,
      chatRequest({
        messages: [
          { role: "system", parts: [{ type: "text", text: "Be brief." }] },
          user("Hello there"),
        ],
      }),
    );
    assert.deepEqual(result.parts, [{ type: "text", text: "You said: Hello there" }]);
    assert.equal(result.finish, "stop");
    assert.deepEqual([result.usage.input, result.usage.output], [4, 4]);
    assert.ok(result.id);
    assert.deepEqual(fake.violations, []);
    assert.equal(style.modelOf(fake.last), "upstream-model-v1");
  });

  Deno.test(`${style.name} adapter: two parallel tool calls`, async () => {
    await using fake = style.start();
    const result = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({ messages: [user("Use get_weather for Paris and Tokyo")] }, {
        tools: [WEATHER],
        toolChoice: "auto",
      }),
    );
    assert.equal(result.finish, "tool_calls");
    assert.equal(texts(result), "");
    assert.deepEqual(calls(result), [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "get_weather", arguments: { city: "Tokyo" } },
    ]);
    const [a, b] = result.parts;
    assert.ok(a?.type === "tool_call" && b?.type === "tool_call" && a.id !== b.id);
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: text before tool calls, in order`, async () => {
    await using fake = style.start();
    fake.script = () => ({
      text: "Let me check both.",
      toolCalls: [
        { name: "get_weather", arguments: { city: "Oslo" } },
        { name: "get_weather", arguments: { city: "Rome" } },
      ],
    });
    const result = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({ messages: [user("Weather?")] }, { tools: [WEATHER] }),
    );
    assert.deepEqual(result.parts.map((p) => p.type), ["text", "tool_call", "tool_call"]);
    assert.equal(texts(result), "Let me check both.");
  });

  const calledTools: Part[] = [
    { type: "tool_call", id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
    { type: "tool_call", id: "call_b", name: "get_weather", arguments: '{"city":"Tokyo"}' },
  ];
  const result = (callId: string, text: string): Part => ({
    type: "tool_result",
    callId,
    content: [{ type: "text", text }],
    isError: false,
  });

  Deno.test(`${style.name} adapter: a tool round trip (results as tool messages)`, async () => {
    await using fake = style.start();
    const answer = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        messages: [
          { role: "developer", parts: [{ type: "text", text: "Use tools." }] },
          user("Use get_weather for Paris and Tokyo"),
          { role: "assistant", parts: calledTools },
          { role: "tool", parts: [result("call_a", "18C and sunny")] },
          { role: "tool", parts: [result("call_b", "25C")] },
        ],
      }, { tools: [WEATHER] }),
    );
    assert.equal(texts(answer), "Tool results: 18C and sunny; 25C");
    assert.equal(answer.finish, "stop");
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: a tool round trip (results in one user message)`, async () => {
    await using fake = style.start();
    const answer = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        messages: [
          user("Use get_weather for Paris and Tokyo"),
          { role: "assistant", parts: calledTools },
          { role: "user", parts: [result("call_a", "18C and sunny"), result("call_b", "25C")] },
        ],
      }, { tools: [WEATHER] }),
    );
    assert.equal(texts(answer), "Tool results: 18C and sunny; 25C");
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: image input`, async () => {
    await using fake = style.start();
    const answer = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({
        messages: [{
          role: "user",
          parts: [
            { type: "text", text: "What is this?" },
            { type: "image", source: { kind: "data", mediaType: "image/png", base64: PNG_1x1 } },
          ],
        }],
      }),
    );
    assert.equal(
      texts(answer),
      `You said: What is this? I see an image/png image of ${pngBytes(1, 1).length} bytes.`,
    );
    assert.deepEqual(fake.violations, []);
  });

  Deno.test(`${style.name} adapter: a stop sequence ends the text`, async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three END four five", toolCalls: [] });
    const answer = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({}, { stop: ["END", "NEVER"] }),
    );
    assert.equal(texts(answer), "one two three ");
    assert.equal(answer.finish, "stop");
    assert.equal(answer.usage.output, 3);
  });

  Deno.test(`${style.name} adapter: max tokens end the text with length`, async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three four five", toolCalls: [] });
    const answer = await both(
      style.make(fake.url, fake.apiKey).provider,
      chatRequest({}, { maxTokens: 2, maxTokensGiven: true }),
    );
    assert.equal(texts(answer), "one two ");
    assert.equal(answer.finish, "length");
    assert.equal(answer.usage.output, 2);
  });

  Deno.test(`${style.name} adapter: unicode survives a stream written 3 bytes at a time`, async () => {
    await using fake = style.start({ sliceBytes: 3 });
    const text = "héllo wörld 🌍 世界 ✓ «fin»";
    fake.script = () => ({
      text,
      toolCalls: [{ name: "get_weather", arguments: { city: "Zürich 🏔" } }],
    });
    const provider = style.make(fake.url, fake.apiKey).provider;
    const req = chatRequest({ stream: true }, { tools: [WEATHER] });
    const events = await collect(provider.chatStream(req, callContext()));
    const got = assembleEvents(events);
    assert.equal(got.parts[0]?.type === "text" && got.parts[0].text, text);
    const call = got.parts[1];
    assert.ok(call?.type === "tool_call");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Zürich 🏔" });
    assert.ok(events.length > 8);
  });
}
