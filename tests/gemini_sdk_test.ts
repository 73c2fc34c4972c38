/**
 * Real clients calling a Gemini-backed model through the gateway on a real port, the fake
 * Gemini upstream writing its streams 7 bytes at a time: the official `openai` client (plain,
 * streamed, parallel tool calls and their results, streamed or not, thinking round trips, an
 * image, a zod JSON schema answer), the Vercel AI SDK
 * (`generateText` and `streamText` running a tool loop) and LangChain (`invoke`, `stream`,
 * `bindTools`). Every request the fake received must follow Gemini's documented format,
 * including its thought-signature rule (the first call of a step sent back with the
 * signature it came with), or the fake answers 400 as Gemini does.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import type { ChatCompletionTool } from "npm:openai@7.55.0/resources/chat/completions";
import { generateText, stepCountIs, streamText, tool } from "npm:ai@7.0.173";
import { createOpenAI } from "npm:@ai-sdk/openai@4.0.118";
import { ChatOpenAI } from "npm:@langchain/openai@1.6.0";
import { HumanMessage, ToolMessage } from "npm:@langchain/core@1.4.0/messages";
import { z } from "npm:zod@4.6.7";
import { zodResponseFormat } from "npm:openai@7.55.0/helpers/zod";
import { dataUrl, pngBytes } from "./support/images.ts";
import { type FakeGemini, geminiSignature, startFakeGemini } from "./support/fake_gemini.ts";
import { createKey, deadline } from "./support/sdk_gateway.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";

const MODEL = "ge-chat";
const UPSTREAM = "gemini-3-flash-up";
const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };

/** The gateway with one Gemini-backed model, the fake behind it and a key for the clients. */
export interface GeminiGateway {
  server: TestServer;
  fake: FakeGemini;
  baseURL: string;
  apiKey: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the fake Gemini upstream and a gateway with `ge-chat` on it. */
export async function startGeminiGateway(
  options: { callIds?: boolean } = {},
): Promise<GeminiGateway> {
  const fake = startFakeGemini({ sliceBytes: 7, ...options });
  const env: Record<string, string> = { GE_KEY: fake.apiKey, SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN };
  const server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "ge",
        style: "gemini",
        base_url: fake.url,
        api_key_env: "GE_KEY",
        max_retries: 0,
      });
      (raw.models as unknown[]).push({
        id: MODEL,
        provider: "ge",
        upstream_model: UPSTREAM,
        chat_completions: true,
        function_calling: true,
        image_input: true,
      });
      raw.limits = {
        anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
      };
    }),
    env: (name) => env[name],
  }).catch(async (error) => {
    await fake.close();
    throw error;
  });
  const apiKey = await createKey(server);
  return {
    server,
    fake,
    baseURL: `${server.url}/v1`,
    apiKey,
    async [Symbol.asyncDispose]() {
      await server.close();
      await fake.close();
    },
  };
}

/** The official client on the gateway: no retries, a deadline on every call. */
export function openai(gateway: GeminiGateway): OpenAI {
  return new OpenAI({
    baseURL: gateway.baseURL,
    apiKey: gateway.apiKey,
    maxRetries: 0,
    timeout: 10_000,
  });
}

export const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { city: { type: "string", description: "A city" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

type Obj = Record<string, unknown>;

/** The parts of the fake's `n`-th request (from the end) in content `i`. */
function partsOf(fake: FakeGemini, i: number, back = 1): Obj[] {
  const body = fake.received.at(-back)!.body as { contents: { parts: Obj[] }[] };
  return body.contents[i]!.parts;
}

Deno.test("gemini/openai: a plain answer, its usage and the upstream request", async () => {
  await using gateway = await startGeminiGateway();
  const completion = await openai(gateway).chat.completions.create({
    model: MODEL,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello there" },
    ],
    max_tokens: 50,
    temperature: 0.4,
    stop: ["NEVER"],
  });
  assert.equal(completion.choices[0]!.message.content, "You said: Hello there");
  assert.equal(completion.choices[0]!.finish_reason, "stop");
  assert.equal(completion.model, MODEL);
  assert.deepEqual(
    [completion.usage?.prompt_tokens, completion.usage?.completion_tokens],
    [4, 4],
  );
  const received = gateway.fake.last;
  assert.equal(received.path, `/v1beta/models/${UPSTREAM}:generateContent`);
  assert.equal(received.headers.get("x-goog-api-key"), gateway.fake.apiKey);
  assert.deepEqual(received.body, {
    contents: [{ role: "user", parts: [{ text: "Hello there" }] }],
    systemInstruction: { parts: [{ text: "Be brief." }] },
    generationConfig: { maxOutputTokens: 50, temperature: 0.4, stopSequences: ["NEVER"] },
  });
  assert.deepEqual(gateway.fake.violations, []);
});

Deno.test("gemini/openai: a streamed answer arrives whole, with usage", async () => {
  await using gateway = await startGeminiGateway();
  gateway.fake.script = () => ({ text: "héllo wörld 🌍, one two three", toolCalls: [] });
  const stream = await openai(gateway).chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: "Say something" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, "héllo wörld 🌍, one two three");
  assert.equal(finish, "stop");
  assert.ok(chunks > 4);
  assert.equal(usage?.completion_tokens, 6);
  assert.equal(gateway.fake.last.path, `/v1beta/models/${UPSTREAM}:streamGenerateContent`);
  assert.deepEqual(gateway.fake.violations, []);
});

for (const callIds of [true, false]) {
  const kind = callIds ? "with Gemini's call ids" : "without call ids (Gemini 2.5)";
  for (const stream of [false, true]) {
    Deno.test(`gemini/openai: parallel tool calls and their results, ${kind}, stream=${stream}`, async () => {
      await using gateway = await startGeminiGateway({ callIds });
      const client = openai(gateway);
      const ask = {
        model: MODEL,
        messages: [{ role: "user" as const, content: "Use get_weather for Paris and Tokyo" }],
        tools: [WEATHER],
      };
      let message: OpenAI.ChatCompletionMessageParam;
      if (!stream) {
        const first = await client.chat.completions.create(ask);
        assert.equal(first.choices[0]!.finish_reason, "tool_calls");
        message = first.choices[0]!.message as OpenAI.ChatCompletionMessageParam;
      } else {
        const s = client.chat.completions.stream({ ...ask, stream: true });
        const first = await s.finalChatCompletion();
        assert.equal(first.choices[0]!.finish_reason, "tool_calls");
        message = first.choices[0]!.message as OpenAI.ChatCompletionMessageParam;
      }
      const calls = (message as OpenAI.ChatCompletionAssistantMessageParam).tool_calls!
        .filter((c) => c.type === "function");
      assert.deepEqual(
        calls.map((c) => JSON.parse(c.function.arguments)),
        [{ city: "Paris" }, { city: "Tokyo" }],
      );
      assert.notEqual(calls[0]!.id, calls[1]!.id);
      // The results come back in the other order: Gemini gets them in the calls' order.
      const second = await client.chat.completions.create({
        ...ask,
        messages: [
          ...ask.messages,
          message,
          { role: "tool", tool_call_id: calls[1]!.id, content: "25C" },
          { role: "tool", tool_call_id: calls[0]!.id, content: "18C and sunny" },
        ],
      });
      assert.equal(second.choices[0]!.message.content, "Tool results: 18C and sunny; 25C");
      assert.deepEqual(gateway.fake.violations, []);
      const [call, other] = partsOf(gateway.fake, 1);
      const args = { city: "Paris" };
      assert.deepEqual(call, {
        functionCall: { ...(callIds ? { id: "call_1" } : {}), name: "get_weather", args },
        thoughtSignature: geminiSignature(UPSTREAM, `call\nget_weather\n${JSON.stringify(args)}`),
      });
      assert.equal(other!.thoughtSignature, undefined);
      const responses = partsOf(gateway.fake, 2).map((p) => p.functionResponse);
      assert.deepEqual(responses, [
        {
          ...(callIds ? { id: "call_1" } : {}),
          name: "get_weather",
          response: { output: "18C and sunny" },
        },
        { ...(callIds ? { id: "call_2" } : {}), name: "get_weather", response: { output: "25C" } },
      ]);
    });
  }
}

Deno.test("gemini/openai: a thinking round trip sends the signatures back in turn two", async () => {
  await using gateway = await startGeminiGateway();
  const client = openai(gateway);
  const ask = {
    model: MODEL,
    reasoning_effort: "low" as const,
    messages: [{ role: "user" as const, content: "Call get_weather for Paris" }],
    tools: [WEATHER],
  };
  const first = await client.chat.completions.create(ask);
  const message = first.choices[0]!.message as OpenAI.ChatCompletionMessage & {
    reasoning_content?: string;
  };
  assert.equal(message.reasoning_content, "Thinking about: Call get_weather for Paris");
  const thinking = (gateway.fake.last.body as { generationConfig: Obj }).generationConfig;
  assert.deepEqual(thinking.thinkingConfig, { thinkingBudget: 1024, includeThoughts: true });
  assert.equal(first.usage?.completion_tokens_details?.reasoning_tokens, 6);
  const call = message.tool_calls![0]!;
  const second = await client.chat.completions.create({
    ...ask,
    messages: [
      ...ask.messages,
      message,
      { role: "tool", tool_call_id: call.id, content: "18C and sunny" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, "Tool results: 18C and sunny");
  assert.deepEqual(gateway.fake.violations, []);
  const [sent] = partsOf(gateway.fake, 1);
  assert.equal(
    sent!.thoughtSignature,
    geminiSignature(UPSTREAM, `call\nget_weather\n${JSON.stringify({ city: "Paris" })}`),
  );

  // A signature changed by the client is refused by Gemini (here the fake), as a 400.
  const at = /^gs_\d+_\d_/.exec(call.id)![0].length;
  const changed = call.id[at] === "A" ? "B" : "A";
  const forged = { ...call, id: call.id.slice(0, at) + changed + call.id.slice(at + 1) };
  const error = await client.chat.completions.create({
    ...ask,
    messages: [
      ...ask.messages,
      { ...message, tool_calls: [forged] },
      { role: "tool", tool_call_id: forged.id, content: "18C and sunny" },
    ],
  }).catch((e) => e);
  assert.equal(error.status, 400);
  assert.match(error.message, /Thought signature is not valid/);
});

Deno.test("gemini/ai-sdk: generateText and streamText run a tool loop", async () => {
  await using gateway = await startGeminiGateway();
  const provider = createOpenAI({ baseURL: gateway.baseURL, apiKey: gateway.apiKey });
  const calls: string[] = [];
  const tools = {
    get_weather: tool({
      description: "Current weather for a city",
      inputSchema: z.object({ city: z.string() }),
      execute: ({ city }) => {
        calls.push(city);
        return Promise.resolve(`${city}: 18C`);
      },
    }),
  };
  const loop = {
    model: provider.chat(MODEL),
    prompt: "Use get_weather for Paris and Tokyo",
    tools,
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  };
  const result = await generateText({ ...loop, abortSignal: deadline() });
  assert.deepEqual(calls, ["Paris", "Tokyo"]);
  assert.equal(result.steps[0]!.finishReason, "tool-calls");
  assert.equal(result.steps.length, 2);
  assert.match(result.text, /Paris: 18C.*Tokyo: 18C/);

  calls.length = 0;
  const streamed = streamText({ ...loop, abortSignal: deadline() });
  let text = "";
  for await (const piece of streamed.textStream) text += piece;
  assert.deepEqual(calls, ["Paris", "Tokyo"]);
  assert.match(text, /Paris: 18C.*Tokyo: 18C/);
  assert.deepEqual(gateway.fake.violations, []);
});

Deno.test("gemini/langchain: invoke, stream and a tool round trip with bindTools", async () => {
  await using gateway = await startGeminiGateway();
  const model = new ChatOpenAI({
    model: MODEL,
    apiKey: gateway.apiKey,
    configuration: { baseURL: gateway.baseURL },
    maxRetries: 0,
    timeout: 10_000,
  });
  const answer = await model.invoke("Hello there");
  assert.equal(answer.content, "You said: Hello there");
  let streamed = "";
  for await (const chunk of await model.stream("Hello again")) streamed += chunk.content;
  assert.equal(streamed, "You said: Hello again");

  const withTools = model.bindTools([WEATHER]);
  const ask = new HumanMessage("Use get_weather for Paris and Tokyo");
  const called = await withTools.invoke([ask]);
  assert.equal(called.tool_calls?.length, 2);
  const results = called.tool_calls!.map((c) =>
    new ToolMessage({ tool_call_id: c.id!, content: `${c.args.city}: 18C` })
  );
  const final = await withTools.invoke([ask, called, ...results]);
  assert.equal(final.content, "Tool results: Paris: 18C; Tokyo: 18C");
  assert.deepEqual(gateway.fake.violations, []);
});

Deno.test("gemini/openai: a streamed thinking turn, then its call and result sent back", async () => {
  await using gateway = await startGeminiGateway();
  const client = openai(gateway);
  const ask = {
    model: MODEL,
    reasoning_effort: "medium" as const,
    messages: [{ role: "user" as const, content: "Call get_weather for Oslo" }],
    tools: [WEATHER],
  };
  const stream = client.chat.completions.stream({ ...ask, stream: true });
  let reasoning = "";
  stream.on("chunk", (chunk) => {
    const delta = chunk.choices[0]?.delta as { reasoning_content?: string } | undefined;
    reasoning += delta?.reasoning_content ?? "";
  });
  const first = await stream.finalChatCompletion();
  assert.equal(reasoning, "Thinking about: Call get_weather for Oslo");
  const message = first.choices[0]!.message;
  const call = message.tool_calls![0]!;
  assert.ok(call.type === "function");
  const second = await client.chat.completions.create({
    ...ask,
    messages: [
      ...ask.messages,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: "-3C" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, "Tool results: -3C");
  assert.deepEqual(gateway.fake.violations, []);
  assert.ok(partsOf(gateway.fake, 1)[0]!.thoughtSignature, "the signature went back");
});

Deno.test("gemini/openai: an image and a JSON schema answer", async () => {
  await using gateway = await startGeminiGateway();
  const client = openai(gateway);
  const png = dataUrl("image/png", pngBytes(2, 2));
  const seen = await client.chat.completions.create({
    model: MODEL,
    messages: [{
      role: "user",
      content: [{ type: "text", text: "What is this?" }, {
        type: "image_url",
        image_url: { url: png },
      }],
    }],
  });
  assert.match(seen.choices[0]!.message.content!, /I see an image\/png image/);
  assert.deepEqual(partsOf(gateway.fake, 0)[1], {
    inlineData: { mimeType: "image/png", data: png.split(",")[1] },
  });

  gateway.fake.script = () => ({ text: '{"city":"Paris","celsius":18}', toolCalls: [] });
  const Weather = z.object({ city: z.string(), celsius: z.number() });
  const parsed = await client.chat.completions.parse({
    model: MODEL,
    messages: [{ role: "user", content: "Weather in Paris as JSON" }],
    response_format: zodResponseFormat(Weather, "weather"),
  });
  assert.deepEqual(parsed.choices[0]!.message.parsed, { city: "Paris", celsius: 18 });
  const config = (gateway.fake.last.body as { generationConfig: Obj }).generationConfig;
  assert.equal(config.responseMimeType, "application/json");
  assert.deepEqual(config.responseJsonSchema, {
    type: "object",
    properties: { city: { type: "string" }, celsius: { type: "number" } },
    required: ["city", "celsius"],
    additionalProperties: false,
  });
  assert.deepEqual(gateway.fake.violations, []);
});
