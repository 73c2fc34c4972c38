/**
 * Amazon Bedrock end to end over a real port: the official `openai` and `@anthropic-ai/sdk`
 * clients reach Claude on the fake Bedrock (which checks every request's SigV4 signature with
 * AWS's signer and streams event-stream frames split at arbitrary bytes) through the chat
 * completions and Messages doors; embeddings through Titan and Cohere; a request signed wrong,
 * a throttled call and a stream cut by an exception message.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import Anthropic from "npm:@anthropic-ai/sdk@1.12.0";
import { parseConfig } from "../src/config/parse.ts";
import { FetchHttpClient } from "../src/http/client/fetch.ts";
import { Logger } from "../src/log/logger.ts";
import { createProviders } from "../src/providers/registry.ts";
import type { AwsCredentials } from "../src/providers/bedrock/sigv4.ts";
import { parseMessagesRequest } from "../src/api/messages/request.ts";
import { promptTokens } from "../src/canonical/prompt_tokens.ts";
import {
  FAKE_AWS_CREDENTIALS,
  FAKE_REGION,
  type FakeBedrock,
  fakeTokenCount,
  startFakeBedrock,
} from "./support/fake_bedrock.ts";
import { dataUrl, pngBytes } from "./support/images.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { eventually } from "./support/eventually.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { createKey } from "./support/sdk_gateway.ts";
import {
  CapturedOutput,
  FakeClock,
  startServer,
  testConfig,
  type TestServer,
} from "./support/server.ts";
import { pdfBase64 } from "./support/pdf.ts";

const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const CALL_TIMEOUT_MS = 10_000;
const SESSION_TOKEN = "IQoJb3JpZ2luX2VjEPr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+session";

const WEATHER_OPENAI: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const WEATHER_ANTHROPIC: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

interface Setup {
  server: TestServer;
  fake: FakeBedrock;
  openai: OpenAI;
  anthropic: Anthropic;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The fake Bedrock (expecting a session token) and a gateway with Claude, Titan and Cohere on
 * it; `secret` is the secret key the gateway is given. */
async function setup(secret = FAKE_AWS_CREDENTIALS.secretAccessKey): Promise<Setup> {
  const fake = startFakeBedrock({
    credentials: { ...FAKE_AWS_CREDENTIALS, sessionToken: SESSION_TOKEN },
    sliceBytes: 13,
  });
  const env: Record<string, string> = {
    BR_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
    BR_SECRET: secret,
    AWS_SESSION_TOKEN: SESSION_TOKEN,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  const server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "br",
        style: "bedrock",
        region: "us-east-1",
        base_url: fake.url,
        access_key_id_env: "BR_KEY_ID",
        secret_access_key_env: "BR_SECRET",
        max_retries: 2,
      });
      (raw.models as unknown[]).push(
        {
          id: "claude",
          provider: "br",
          upstream_model: CLAUDE,
          chat_completions: true,
          function_calling: true,
          image_input: true,
        },
        {
          id: "titan",
          provider: "br",
          upstream_model: "amazon.titan-embed-text-v2:0",
          embeddings: true,
        },
        {
          id: "cohere",
          provider: "br",
          upstream_model: "cohere.embed-english-v3",
          embeddings: true,
        },
      );
      raw.limits = GENEROUS_LIMITS;
    }),
    env: (name) => env[name],
  });
  const options = { apiKey: await createKey(server), maxRetries: 0, timeout: CALL_TIMEOUT_MS };
  return {
    server,
    fake,
    openai: new OpenAI({ ...options, baseURL: `${server.url}/v1` }),
    anthropic: new Anthropic({ ...options, baseURL: server.url }),
    async [Symbol.asyncDispose]() {
      await server.close();
      await fake.close();
    },
  };
}

function assertSigned(fake: FakeBedrock, count: number) {
  assert.equal(fake.received.length, count);
  assert.deepEqual(fake.violations, []);
  for (const r of fake.received) {
    assert.ok(r.signed, "every request signed right");
    assert.equal(r.headers.get("x-amz-security-token"), SESSION_TOKEN);
    assert.equal(r.modelId !== "", true);
  }
}

Deno.test("bedrock/openai: chat answers through Converse, signed, usage mapped", async () => {
  await using s = await setup();
  const completion = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "Hello there" }],
    max_tokens: 100,
    temperature: 0.5,
  });
  assert.equal(completion.model, "claude");
  assert.equal(completion.choices[0]!.finish_reason, "stop");
  assert.equal(completion.choices[0]!.message.content, "You said: Hello there");
  const last = s.fake.last;
  assert.equal(last.path, `/model/${encodeURIComponent(CLAUDE)}/converse`);
  assert.equal(last.modelId, CLAUDE);
  assert.deepEqual((last.body as { system: unknown }).system, [{ text: "Be terse." }]);
  assert.deepEqual((last.body as { inferenceConfig: unknown }).inferenceConfig, {
    maxTokens: 100,
    temperature: 0.5,
  });
  assert.ok(completion.usage!.prompt_tokens > 0);
  assert.equal(completion.usage!.completion_tokens, 4, "the fake's outputTokens: 4 words");
  assertSigned(s.fake, 1);
});

Deno.test("bedrock/openai: the Responses API reaches Converse too, streamed and not", async () => {
  await using s = await setup();
  const response = await s.openai.responses.create({
    model: "claude",
    instructions: "Be terse.",
    input: "Hello there",
  });
  assert.equal(response.output_text, "You said: Hello there");
  assert.equal(response.model, "claude");
  assert.ok(response.usage!.input_tokens > 0 && response.usage!.output_tokens === 4);
  const stream = await s.openai.responses.create({
    model: "claude",
    input: "Hello again",
    stream: true,
  });
  let text = "";
  let completed = false;
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.completed") completed = true;
  }
  assert.equal(text, "You said: Hello again");
  assert.ok(completed);
  assert.deepEqual(s.fake.received.map((r) => r.operation), ["converse", "converse-stream"]);
  assertSigned(s.fake, 2);
});

Deno.test("bedrock/openai: a streamed tool call and its answer, usage at the end", async () => {
  await using s = await setup();
  const stream = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Use get_weather for Paris" }],
    tools: [WEATHER_OPENAI],
    stream: true,
    stream_options: { include_usage: true },
  });
  let args = "";
  let id = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    for (const call of choice?.delta.tool_calls ?? []) {
      if (call.id) id = call.id;
      args += call.function?.arguments ?? "";
    }
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(finish, "tool_calls");
  assert.deepEqual(JSON.parse(args), { city: "Paris" });
  assert.match(id, /^tooluse_/);
  assert.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.equal(s.fake.last.operation, "converse-stream");
  const toolConfig = (s.fake.last.body as { toolConfig: Record<string, unknown> }).toolConfig;
  assert.deepEqual(toolConfig.tools, [{
    toolSpec: {
      name: "get_weather",
      description: "The weather in a city.",
      inputSchema: { json: WEATHER_OPENAI.function.parameters },
    },
  }]);

  /** The conversation so far: asked, the call made, its `result`. */
  const history = (result: string): OpenAI.ChatCompletionMessageParam[] => [
    { role: "user", content: "Use get_weather for Paris" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: args } }],
    },
    { role: "tool", tool_call_id: id, content: result },
  ];
  const answer = await s.openai.chat.completions.create({
    model: "claude",
    messages: history("Sunny, 21 C"),
    tools: [WEATHER_OPENAI],
  });
  assert.equal(answer.choices[0]!.message.content, "Tool results: Sunny, 21 C");

  // The same history with no tools offered (a summary call): the calls go as text, as Converse
  // refuses tool blocks without a toolConfig, and an empty result is not a blank text.
  const summary = await s.openai.chat.completions.create({
    model: "claude",
    messages: [...history(""), { role: "user", content: "Summarise" }],
  });
  assert.equal(summary.choices[0]!.finish_reason, "stop");
  assertSigned(s.fake, 3);
});

Deno.test("bedrock/openai: response_format json_schema answers JSON text, streamed and not", async () => {
  await using s = await setup();
  const response_format = {
    type: "json_schema" as const,
    json_schema: {
      name: "person",
      schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
  };
  const messages = [{ role: "user" as const, content: "Who?" }];
  const completion = await s.openai.chat.completions.create({
    model: "claude",
    messages,
    response_format,
  });
  assert.equal(completion.choices[0]!.finish_reason, "stop");
  assert.deepEqual(JSON.parse(completion.choices[0]!.message.content!), { name: "x" });
  assert.equal(completion.choices[0]!.message.tool_calls, undefined);
  const stream = await s.openai.chat.completions.create({
    model: "claude",
    messages,
    response_format,
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  assert.deepEqual(JSON.parse(text), { name: "x" });
  const toolConfig = (s.fake.last.body as { toolConfig: { toolChoice: unknown } }).toolConfig;
  assert.deepEqual(toolConfig.toolChoice, { tool: { name: "json_output" } });
  assertSigned(s.fake, 2);
});

Deno.test("bedrock/openai: an image goes as bytes in its format", async () => {
  await using s = await setup();
  const png = pngBytes(4, 3);
  const completion = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: dataUrl("image/png", png) } },
      ],
    }],
  });
  assert.equal(
    completion.choices[0]!.message.content,
    `You said: What is this? I see an image/png image of ${png.length} bytes.`,
  );
  const content = (s.fake.last.body as { messages: { content: unknown[] }[] }).messages[0]!.content;
  assert.deepEqual(content[1], { image: { format: "png", source: { bytes: png.toBase64() } } });
  assertSigned(s.fake, 1);
});

Deno.test("bedrock/anthropic-sdk: a PDF in a tool result and a text document go as Converse documents", async () => {
  await using s = await setup();
  const pdf = pdfBase64(3);
  const message = await s.anthropic.messages.create({
    model: "claude",
    max_tokens: 256,
    messages: [
      { role: "user", content: "What does the report say?" },
      {
        role: "assistant",
        content: [{
          type: "tool_use",
          id: "toolu_1",
          name: "get_weather",
          input: { city: "Oslo" },
        }],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{
              type: "document",
              source: { type: "base64", media_type: "application/pdf", data: pdf },
              title: "Q3 report (final).pdf",
            }],
          },
          {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: "Oslo: rain." },
            title: "notes.txt",
            context: "field notes",
          },
        ],
      },
    ],
    tools: [WEATHER_ANTHROPIC],
  });
  assert.equal(message.type, "message");
  const turn = (s.fake.last.body as { messages: { content: Record<string, unknown>[] }[] })
    .messages.at(-1)!.content;
  assert.deepEqual(turn[0], {
    toolResult: {
      toolUseId: "toolu_1",
      content: [{
        document: { format: "pdf", name: "Q3 report (final) pdf", source: { bytes: pdf } },
      }],
    },
  });
  assert.deepEqual(turn[1], {
    document: {
      format: "txt",
      name: "notes txt",
      source: { text: "Oslo: rain." },
      context: "field notes",
    },
  });
  assertSigned(s.fake, 1);
});

/** The Messages API tool loop with thinking: the thinking block and its signature come back
 * unchanged and go to Bedrock first in the calls' turn, where the fake checks them. */
async function thinkingToolLoop(s: Setup, stream: boolean) {
  const ask = async (messages: Anthropic.MessageParam[]) => {
    const params = {
      model: "claude",
      max_tokens: 2048,
      thinking: { type: "enabled" as const, budget_tokens: 1024 },
      tools: [WEATHER_ANTHROPIC],
      messages,
    };
    return stream
      ? await s.anthropic.messages.stream(params).finalMessage()
      : await s.anthropic.messages.create(params);
  };
  const question: Anthropic.MessageParam = { role: "user", content: "Use get_weather for Paris" };
  const first = await ask([question]);
  assert.equal(first.stop_reason, "tool_use");
  assert.deepEqual(first.content.map((b) => b.type), ["thinking", "tool_use"]);
  const thinking = first.content[0] as Anthropic.ThinkingBlock;
  assert.equal(thinking.thinking, "Thinking about: Use get_weather for Paris");
  assert.ok(thinking.signature.length > 20);
  const call = first.content[1] as Anthropic.ToolUseBlock;
  assert.deepEqual(call.input, { city: "Paris" });
  const sent = s.fake.last.body as Record<string, Record<string, unknown>>;
  assert.deepEqual(sent.additionalModelRequestFields, {
    thinking: { type: "enabled", budget_tokens: 1024 },
  });

  const second = await ask([
    question,
    { role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "Sunny" }] },
  ]);
  assert.equal(second.stop_reason, "end_turn");
  assert.deepEqual(second.content.map((b) => b.type), ["thinking", "text"]);
  assert.equal((second.content[1] as Anthropic.TextBlock).text, "Tool results: Sunny");
  const turn = (s.fake.last.body as { messages: { content: Record<string, unknown>[] }[] })
    .messages[1]!;
  assert.deepEqual(turn.content[0], {
    reasoningContent: { reasoningText: { text: thinking.thinking, signature: thinking.signature } },
  });
  assert.ok(second.usage.output_tokens > 0);
  assertSigned(s.fake, 2);
}

Deno.test("bedrock/anthropic-sdk: thinking and a tool loop, not streamed", async () => {
  await using s = await setup();
  await thinkingToolLoop(s, false);
});

Deno.test("bedrock/anthropic-sdk: thinking and a tool loop, streamed", async () => {
  await using s = await setup();
  await thinkingToolLoop(s, true);
  assert.ok(s.fake.received.every((r) => r.operation === "converse-stream"));
});

Deno.test("bedrock/anthropic-sdk: cache_control becomes a cachePoint; cached tokens come back", async () => {
  await using s = await setup();
  const system: Anthropic.TextBlockParam[] = [{
    type: "text",
    text: "You answer questions about a long manual. ".repeat(40),
    cache_control: { type: "ephemeral" },
  }];
  const ask = () =>
    s.anthropic.messages.create({
      model: "claude",
      max_tokens: 100,
      system,
      messages: [{ role: "user", content: "Hello" }],
    });
  const first = await ask();
  assert.deepEqual((s.fake.last.body as { system: unknown[] }).system[1], {
    cachePoint: { type: "default" },
  });
  assert.ok(first.usage.cache_creation_input_tokens! > 0, "written to the cache");
  assert.equal(first.usage.cache_read_input_tokens, 0);
  const second = await ask();
  assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
  assert.equal(second.usage.cache_creation_input_tokens, 0);
  assert.equal(second.usage.input_tokens, first.usage.input_tokens);

  // The same through chat completions: cached tokens in prompt_tokens_details, inside prompt_tokens.
  const chat = await s.openai.chat.completions.create({
    model: "claude",
    messages: [
      {
        role: "system",
        content: [
          {
            type: "text",
            text: system[0]!.text,
            cache_control: { type: "ephemeral" },
          } as OpenAI.ChatCompletionContentPartText,
        ],
      },
      { role: "user", content: "Hello" },
    ],
  });
  const cached = chat.usage!.prompt_tokens_details?.cached_tokens ?? 0;
  assert.equal(cached, second.usage.cache_read_input_tokens);
  assert.equal(chat.usage!.prompt_tokens, second.usage.input_tokens + cached);
  assertSigned(s.fake, 3);
});

Deno.test("bedrock/claude-code: the request Claude Code sends (betas, mid-conversation system, a tool loop) is served; count_tokens answers", async () => {
  await using s = await setup();
  const fixture = JSON.parse(
    await Deno.readTextFile(new URL("./support/claude_code_request.json", import.meta.url)),
  );
  const headers = { ...fixture.headers, "content-type": "application/json" };
  for (const stream of [false, true]) {
    const response = await fetch(`${s.server.url}${fixture.path}`, {
      method: "POST",
      headers,
      body: JSON.stringify({ ...fixture.body, model: "claude", stream }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const dropped = response.headers.get("x-switchyard-dropped-params") ?? "";
    assert.match(dropped, /context_management/);
    // The simulator's thinking block cannot go to Claude, so thinking cannot continue the loop.
    assert.match(dropped, /thinking|reasoning_effort/);
    if (stream) assert.match(text, /event: message_stop/);
    else assert.equal(JSON.parse(text).type, "message");
  }
  assertSigned(s.fake, 2);
  const sent = s.fake.last.body as {
    toolConfig: { tools: unknown[] };
    messages: { content: Record<string, unknown>[] }[];
  };
  assert.ok(sent.toolConfig.tools.length > 1);
  assert.ok(sent.messages.at(-1)!.content.some((b) => "toolResult" in b));
  const counted = await fetch(`${s.server.url}/v1/messages/count_tokens?beta=true`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: "claude",
      messages: fixture.body.messages,
      tools: fixture.body.tools,
    }),
  });
  assert.equal(counted.status, 200);
  // Bedrock's count, for the profile's foundation model; the streamed turn above asked none
  // (its message_start carries the estimate).
  assertSigned(s.fake, 3);
  const count = s.fake.last;
  assert.equal(count.path, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens");
  const input =
    (count.body as { input: { converse: { messages: unknown[]; toolConfig: unknown } } })
      .input;
  assert.ok(input.converse.messages.length > 1 && input.converse.toolConfig !== undefined);
  assert.equal((await counted.json()).input_tokens, fakeTokenCount(input.converse));
});

Deno.test("bedrock: the Gemini door's countTokens is Bedrock's count too", async () => {
  await using fake = startFakeBedrock();
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: FAKE_AWS_CREDENTIALS.secretAccessKey,
  };
  await using server = await bedrockGateway(fake, env);
  const res = await fetch(`${server.url}/v1beta/models/claude:countTokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "Count these words for me, please." }] }],
    }),
  });
  assert.equal(res.status, 200);
  const sent = fake.last;
  assert.equal(sent.path, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens");
  const converse = (sent.body as { input: { converse: unknown } }).input.converse;
  assert.deepEqual(converse, {
    messages: [{ role: "user", content: [{ text: "Count these words for me, please." }] }],
  });
  const total = fakeTokenCount(converse);
  assert.deepEqual(await res.json(), {
    totalTokens: total,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: total }],
  });
  assert.deepEqual(fake.violations, []);
});

Deno.test("bedrock: count_tokens of a model Bedrock cannot count for is the gateway's estimate", async () => {
  await using fake = startFakeBedrock();
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: FAKE_AWS_CREDENTIALS.secretAccessKey,
  };
  await using server = await bedrockGateway(fake, env, undefined, {}, {
    id: "nova",
    upstream_model: "us.amazon.nova-pro-v1:0",
  });
  const body = {
    model: "nova",
    system: "You are terse.",
    messages: [{ role: "user", content: "How many tokens is this sentence, roughly?" }],
  };
  const res = await fetch(`${server.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const { req } = parseMessagesRequest(body, testConfig().limits, true);
  assert.deepEqual(await res.json(), { input_tokens: promptTokens(req) });
  assert.deepEqual(fake.received.map((r) => r.path), [
    "/model/amazon.nova-pro-v1%3A0/count-tokens",
  ]);
  assert.deepEqual(fake.violations, []);
});

Deno.test("bedrock/openai: embeddings through Titan (one call per input) and Cohere (one call)", async () => {
  await using s = await setup();
  const texts = ["rivers and mountains", "ledgers and invoices", "a third text"];
  const titan = await s.openai.embeddings.create({
    model: "titan",
    input: texts,
    dimensions: 256,
    encoding_format: "float",
  });
  assert.equal(titan.data.length, 3);
  assert.ok(titan.data.every((d) => d.embedding.length === 256));
  assert.notDeepEqual(titan.data[0]!.embedding, titan.data[1]!.embedding);
  // inputTextTokenCount of each call, summed.
  assert.equal(titan.usage.prompt_tokens, 3 + 3 + 3 + 3);
  assert.deepEqual(
    s.fake.received.map((r) => r.body),
    texts.map((inputText) => ({
      inputText,
      dimensions: 256,
      normalize: true,
    })),
  );

  const base64 = await s.openai.embeddings.create({
    model: "titan",
    input: texts[0]!,
    dimensions: 256,
  });
  const decoded = base64.data[0]!.embedding;
  decoded.forEach((v, i) => assert.ok(Math.abs(v - titan.data[0]!.embedding[i]!) < 1e-6));

  const cohere = await s.openai.embeddings.create({
    model: "cohere",
    input: texts,
    encoding_format: "float",
  });
  assert.equal(cohere.data.length, 3);
  assert.ok(cohere.data.every((d) => d.embedding.length === 1024));
  assert.ok(cohere.usage.prompt_tokens > 0);
  assert.deepEqual(s.fake.last.body, {
    texts,
    input_type: "search_document",
    embedding_types: ["float"],
  });
  assert.equal(s.fake.last.path, `/model/${encodeURIComponent("cohere.embed-english-v3")}/invoke`);

  // Over Cohere's 96 texts a call: several calls, the vectors in order.
  const many = Array.from({ length: 100 }, (_, i) => `text number ${i}`);
  const before = s.fake.received.length;
  const batched = await s.openai.embeddings.create({
    model: "cohere",
    input: many,
    encoding_format: "float",
  });
  assert.deepEqual(
    s.fake.received.slice(before).map((r) => (r.body as { texts: string[] }).texts.length),
    [96, 4],
  );
  const single = await s.openai.embeddings.create({
    model: "cohere",
    input: many[97]!,
    encoding_format: "float",
  });
  assert.deepEqual(batched.data[97]!.embedding, single.data[0]!.embedding);

  const wrong = await fetch(`${s.server.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "titan", input: "x", dimensions: 300 }),
  });
  assert.equal(wrong.status, 400);
  const error = (await wrong.json()).error;
  assert.equal(error.param, "dimensions");
  assertSigned(s.fake, 8);
});

Deno.test("bedrock: a request signed wrong is a clear 502 naming the provider, never the keys", async () => {
  await using s = await setup("not-the-secret-key-0123456789");
  const error = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Hello" }],
  }).then(() => null, (e) => e);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, 502);
  assert.match(
    error.message,
    /"br" refused the gateway's AWS credentials \(HTTP 403 InvalidSignatureException\)/,
  );
  assert.equal(s.fake.received.length, 1, "a refused signature is not retried");
  assert.equal(s.fake.received[0]!.signed, false);
  assert.match(s.server.output.err, /check BR_KEY_ID, BR_SECRET and AWS_SESSION_TOKEN/);
  const everything = error.message + s.server.output.out + s.server.output.err;
  for (
    const secret of ["not-the-secret-key", FAKE_AWS_CREDENTIALS.secretAccessKey, SESSION_TOKEN]
  ) {
    assert.ok(!everything.includes(secret), "no secret in the answer or the logs");
  }
});

Deno.test("bedrock: a throttled call (429 ThrottlingException) is retried and then answers", async () => {
  await using s = await setup();
  s.fake.faults = [{ status: 429, errorType: "ThrottlingException", message: "Too many requests" }];
  const completion = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Hello" }],
  });
  assert.equal(completion.choices[0]!.message.content, "You said: Hello");
  assertSigned(s.fake, 2);

  // Throttled every time: the caller gets a 429 after the retries.
  s.fake.faults = [1, 2, 3].map(() => ({ status: 429, errorType: "ThrottlingException" }));
  const error = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Hello" }],
  }).then(() => null, (e) => e);
  assert.equal(error?.status, 429);
  assert.equal(s.fake.received.length, 5);

  // A ValidationException is the caller's 400 with Bedrock's message, not retried.
  s.fake.faults = [{
    status: 400,
    errorType: "ValidationException",
    message: "messages.0: bad thing",
  }];
  const invalid = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Hello" }],
  }).then(() => null, (e) => e);
  assert.equal(invalid?.status, 400);
  assert.match(invalid.message, /messages\.0: bad thing/);
  assert.equal(invalid.code, "ValidationException");
  assert.equal(s.fake.received.length, 6);

  // A model not ready yet (its 429) is retried like throttling; a service unavailable every
  // time is a 503 after the retries; access denied is the operator's 502, not retried.
  const hello = { model: "claude", messages: [{ role: "user" as const, content: "Hello" }] };
  s.fake.faults = [{ status: 429, errorType: "ModelNotReadyException" }];
  assert.equal((await s.openai.chat.completions.create(hello)).choices[0]!.finish_reason, "stop");
  assert.equal(s.fake.received.length, 8);
  s.fake.faults = [1, 2, 3].map(() => ({ status: 503, errorType: "ServiceUnavailableException" }));
  const unavailable = await s.openai.chat.completions.create(hello).then(() => null, (e) => e);
  assert.equal(unavailable?.status, 503);
  assert.equal(unavailable.code, "upstream_overloaded");
  assert.equal(s.fake.received.length, 11);
  s.fake.faults = [{ status: 403, errorType: "AccessDeniedException", message: "not authorized" }];
  const denied = await s.openai.chat.completions.create(hello).then(() => null, (e) => e);
  assert.equal(denied?.status, 502);
  assert.match(denied.message, /AWS credentials \(HTTP 403 AccessDeniedException\)/);
  assert.equal(s.fake.received.length, 12);
});

Deno.test("bedrock: an exception frame mid-stream ends the stream with the protocol's error event", async () => {
  await using s = await setup();
  s.fake.faults = [{
    exceptionAfterEvents: 3,
    exceptionType: "modelStreamErrorException",
    message: "The model failed.",
  }];
  const response = await fetch(`${s.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude",
      stream: true,
      messages: [{ role: "user", content: "Tell me a long story about rivers" }],
    }),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  const data = text.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice(6));
  assert.ok(data.length >= 2, text);
  assert.notEqual(data.at(-1), "[DONE]");
  const error = JSON.parse(data.at(-1)!).error;
  assert.match(
    error.message,
    /"br" failed mid-stream \(ModelStreamErrorException\): The model failed\./,
  );
  assert.match(JSON.parse(data[1]!).choices[0].delta.content, /You/);

  // Through the Messages door: Anthropic's `error` event, which the SDK throws.
  s.fake.faults = [{
    exceptionAfterEvents: 2,
    exceptionType: "throttlingException",
    message: "Slow down",
  }];
  const failed = await s.anthropic.messages.stream({
    model: "claude",
    max_tokens: 100,
    messages: [{ role: "user", content: "Hello there" }],
  }).finalMessage().then(() => null, (e) => e);
  assert.ok(failed instanceof Anthropic.APIError, String(failed));
  assert.match(failed.message, /rate limiting requests: Slow down/);
});

/** A gateway with model `claude` (or `model`'s id and fields) on a bedrock provider `brk` over
 * `fake` (with `provider`'s fields), its credentials from `env` (access keys, a role's source, or
 * the variable `api_key_env` names). */
function bedrockGateway(
  fake: FakeBedrock,
  env: Record<string, string>,
  clock?: FakeClock,
  provider: Record<string, unknown> = {},
  model: Record<string, unknown> = {},
): Promise<TestServer> {
  return startServer({
    ...(clock ? { clock } : {}),
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "brk",
        style: "bedrock",
        region: FAKE_REGION,
        base_url: fake.url,
        max_retries: 0,
        ...provider,
      });
      (raw.models as unknown[]).push({
        id: "claude",
        provider: "brk",
        upstream_model: CLAUDE,
        chat_completions: true,
        ...model,
      });
    }),
    env: (name) => env[name],
  });
}

/** A chat call to `claude` that the fake answers (an echo of `text`). */
async function askClaudeOk(server: TestServer, text: string): Promise<void> {
  const { status, body } = await askClaude(server, text);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].message.content, `You said: ${text}`);
}

/** A chat call to `claude`: its status and body. */
async function askClaude(server: TestServer, text: string) {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "claude", messages: [{ role: "user", content: text }] }),
  });
  return { status: response.status, body: await response.json() };
}

Deno.test("bedrock: a Bedrock API key (api_key_env) goes as a bearer token instead of a signature", async () => {
  await using fake = startFakeBedrock({ bearerToken: "ABSKQmVkcm9ja0FQSUtleS1example" });
  const env: Record<string, string> = { BEDROCK_KEY: "ABSKQmVkcm9ja0FQSUtleS1example" };
  await using server = await bedrockGateway(fake, env, undefined, {
    region: "us-west-2",
    api_key_env: "BEDROCK_KEY",
  });
  const { status, body } = await askClaude(server, "Hello");
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].message.content, "You said: Hello");
  assert.equal(fake.last.headers.get("x-amz-date"), null, "not signed");
  assert.deepEqual(fake.violations, []);
  assert.ok(!server.output.err.includes("ABSK"), "the key is in no log");
});

Deno.test("bedrock: a client that leaves mid-stream aborts the upstream call", async () => {
  await using s = await setup();
  s.fake.sliceBytes = 1;
  const controller = new AbortController();
  const response = await fetch(`${s.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude",
      stream: true,
      messages: [{ role: "user", content: "Tell me a long story about rivers ".repeat(20) }],
    }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.cancel().catch(() => {});
  await eventually(() => s.fake.last.wentAway || undefined, "the upstream call to be cut");
});

Deno.test("bedrock: a broken connection, a corrupted frame or a garbage answer is a clear 502", async () => {
  await using s = await setup();
  const stream = async () => {
    const response = await fetch(`${s.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude",
        stream: true,
        messages: [{ role: "user", content: "Tell me about rivers" }],
      }),
    });
    assert.equal(response.status, 200);
    const data = (await response.text()).split("\n\n").filter((e) => e.startsWith("data: "));
    return JSON.parse(data.at(-1)!.slice(6)).error;
  };
  s.fake.faults = [{ breakAfterEvents: 3 }];
  assert.match((await stream()).message, /connection to the upstream provider "br" broke/);
  s.fake.faults = [{ corruptEvent: 2 }];
  assert.match((await stream()).message, /broken event stream \(message CRC mismatch\)/);
  s.fake.faults = [{ garbage: "<html>proxy error</html>" }];
  const error = await s.openai.chat.completions.create({
    model: "claude",
    messages: [{ role: "user", content: "Hello" }],
  }).then(() => null, (e) => e);
  assert.equal(error?.status, 502);
  assert.match(error.message, /not JSON/);
});

Deno.test("bedrock discovery: the text models invoked by id and the inference profiles of text models, every page, signed", async () => {
  await using fake = startFakeBedrock();
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: FAKE_AWS_CREDENTIALS.secretAccessKey,
  };
  const config = parseConfig({
    providers: [{
      id: "br",
      style: "bedrock",
      region: "us-east-1",
      base_url: "http://127.0.0.1:9",
      control_url: fake.url,
      discover: true,
    }],
    models: [{ id: "x", provider: "br", chat_completions: true }],
  }, "test.json");
  const output = new CapturedOutput();
  const clock = new FakeClock();
  const providers = createProviders(config, {
    env: (name) => env[name],
    http: new FetchHttpClient(),
    clock,
    logger: new Logger({ clock, output }),
  });
  try {
    const listed = await providers.get("br")!.listModels!(AbortSignal.timeout(CALL_TIMEOUT_MS));
    assert.deepEqual(listed.map((m) => [m.id, m.imageInput, m.functionCalling]), [
      ["anthropic.claude-3-haiku-20240307-v1:0", true, true],
      ["meta.llama3-8b-instruct-v1:0", false, null],
      ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", true, true],
      ["eu.anthropic.claude-3-haiku-20240307-v1:0", true, true],
    ]);
    assert.deepEqual(fake.received.map((r) => r.path), [
      "/foundation-models",
      "/inference-profiles",
      "/inference-profiles",
    ]);
    assert.ok(fake.received.every((r) => r.signed), "every listing signed (query strings too)");
    assert.deepEqual(fake.violations, []);
  } finally {
    providers.close();
  }
});

Deno.test("bedrock config: missing AWS keys disable the provider with one warning; bad fields are named", () => {
  const raw = (provider: Record<string, unknown>) => ({
    providers: [{ id: "br", style: "bedrock", region: "eu-west-3", ...provider }],
    models: [{ id: "claude", provider: "br", upstream_model: CLAUDE, chat_completions: true }],
  });
  const config = parseConfig(raw({}), "test.json");
  assert.equal(config.providers[0]!.base_url, "https://bedrock-runtime.eu-west-3.amazonaws.com");
  assert.deepEqual(config.providers[0]!.bedrock, {
    region: "eu-west-3",
    control_url: "https://bedrock.eu-west-3.amazonaws.com",
    access_key_id_env: "AWS_ACCESS_KEY_ID",
    secret_access_key_env: "AWS_SECRET_ACCESS_KEY",
    session_token_env: "AWS_SESSION_TOKEN",
    instance_role: false,
  });
  const output = new CapturedOutput();
  const clock = new FakeClock();
  const env: Record<string, string> = { AWS_ACCESS_KEY_ID: "AKID" };
  const providers = createProviders(config, {
    env: (name) => env[name],
    http: new FetchHttpClient(),
    clock,
    logger: new Logger({ clock, output }),
  });
  assert.equal(providers.isAvailable("br"), false);
  const warnings = output.err.trim().split("\n").map((line) => JSON.parse(line).message);
  assert.deepEqual(warnings, [
    'provider "br" disabled: AWS_SECRET_ACCESS_KEY is not set; its models are not listed',
  ]);
  providers.close();

  assert.throws(
    () => parseConfig(raw({ region: "Europe" }), "test.json"),
    /providers\[0\]\.region.*an AWS region like us-east-1/,
  );

  assert.throws(
    () => parseConfig(raw({ access_key_id_env: "1BAD" }), "test.json"),
    /access_key_id_env/,
  );
  assert.throws(() => parseConfig(raw({ region: undefined }), "test.json"), /region/);
});

Deno.test("bedrock docs: the page's config is valid and enables its models with AWS keys set", async () => {
  const page = await Deno.readTextFile(new URL("../docs/bedrock.md", import.meta.url));
  const examples = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
  assert.equal(examples.length, 1);
  const config = parseConfig(examples[0], "docs/bedrock.md");
  const output = new CapturedOutput();
  const clock = new FakeClock();
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: "AKID",
    AWS_SECRET_ACCESS_KEY: "secret",
  };
  const providers = createProviders(config, {
    env: (name) => env[name],
    http: new FetchHttpClient(),
    clock,
    logger: new Logger({ clock, output }),
  });
  for (const model of config.models) assert.ok(providers.isAvailable(model.provider));
  assert.equal(output.err, "");
  providers.close();
});

Deno.test("bedrock: without access keys, a task's IAM role from the container credentials endpoint signs the calls, renewed before it expires", async () => {
  await using fake = startFakeBedrock();
  const clock = new FakeClock();
  let fetched = 0;
  const auth: (string | null)[] = [];
  // ECS's endpoint: each answer a role's new temporary keys, expiring an hour later.
  const endpoint = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    fetched++;
    auth.push(request.headers.get("authorization"));
    const credentials = {
      accessKeyId: `ASIAROLEKEY${fetched}EXAMPLE`,
      secretAccessKey: `role-secret-${fetched}`,
      sessionToken: `role-session-token-${fetched}`,
    };
    fake.credentials = credentials;
    return Response.json({
      RoleArn: "arn:aws:iam::123456789012:role/switchyard",
      AccessKeyId: credentials.accessKeyId,
      SecretAccessKey: credentials.secretAccessKey,
      Token: credentials.sessionToken,
      Expiration: new Date(clock.now() + 3_600_000).toISOString(),
    });
  });
  const env: Record<string, string> = {
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${endpoint.addr.port}/v2/credentials/x`,
    AWS_CONTAINER_AUTHORIZATION_TOKEN: "container-auth-token",
  };
  try {
    await using server = await bedrockGateway(fake, env, clock);
    const ask = (text: string) => askClaudeOk(server, text);
    await ask("Hello role");
    await ask("Hello again");
    assert.equal(fetched, 1, "one fetch for both calls");
    assert.deepEqual(auth, ["container-auth-token"]);
    assert.equal(fake.last.headers.get("x-amz-security-token"), "role-session-token-1");
    // 56 minutes on: under 5 minutes from expiry, the next call renews them first.
    clock.advance(56 * 60_000);
    await ask("Hello renewed");
    assert.equal(fetched, 2);
    assert.equal(fake.last.headers.get("x-amz-security-token"), "role-session-token-2");
    assert.deepEqual(fake.violations, []);
    assert.ok(!server.output.err.includes("role-secret"), "no secret in the log");
  } finally {
    await endpoint.shutdown();
  }
});

Deno.test("bedrock: a container credentials endpoint that fails is a 502 naming the role, and access keys win over it", async () => {
  await using fake = startFakeBedrock();
  const endpoint = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response("no role", { status: 500 }),
  );
  const url = `http://127.0.0.1:${endpoint.addr.port}/creds`;
  try {
    for (const keys of [false, true]) {
      const env: Record<string, string> = { AWS_CONTAINER_CREDENTIALS_FULL_URI: url };
      if (keys) {
        env.AWS_ACCESS_KEY_ID = FAKE_AWS_CREDENTIALS.accessKeyId;
        env.AWS_SECRET_ACCESS_KEY = FAKE_AWS_CREDENTIALS.secretAccessKey;
      }
      await using server = await bedrockGateway(fake, env);
      const { status, body } = await askClaude(server, "Hi");
      if (keys) {
        assert.equal(status, 200, JSON.stringify(body));
      } else {
        assert.equal(status, 502);
        assert.match(
          body.error.message,
          /"brk" has no AWS credentials: the container credentials endpoint answered HTTP 500.*IAM role/,
        );
      }
    }
  } finally {
    await endpoint.shutdown();
  }
});

Deno.test("bedrock: with instance_role, an EC2 instance's role from IMDSv2 (a session token, the role's name, its credentials) signs the calls", async () => {
  await using fake = startFakeBedrock();
  const seen: string[] = [];
  const imds = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    seen.push(`${request.method} ${path}`);
    if (request.method === "PUT" && path === "/latest/api/token") {
      if (request.headers.get("x-aws-ec2-metadata-token-ttl-seconds") === null) {
        return new Response("", { status: 400 });
      }
      return new Response("imds-session-token");
    }
    if (request.headers.get("x-aws-ec2-metadata-token") !== "imds-session-token") {
      return new Response("", { status: 401 });
    }
    if (path === "/latest/meta-data/iam/security-credentials/") {
      return new Response("switchyard-ec2\n");
    }
    if (path === "/latest/meta-data/iam/security-credentials/switchyard-ec2") {
      fake.credentials = {
        accessKeyId: "ASIAINSTANCEEXAMPLE",
        secretAccessKey: "instance-secret",
        sessionToken: "instance-session-token",
      };
      return Response.json({
        Code: "Success",
        Type: "AWS-HMAC",
        AccessKeyId: "ASIAINSTANCEEXAMPLE",
        SecretAccessKey: "instance-secret",
        Token: "instance-session-token",
        Expiration: new Date(Date.now() + 6 * 3_600_000).toISOString(),
      });
    }
    return new Response("", { status: 404 });
  });
  const env = { AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://127.0.0.1:${imds.addr.port}/` };
  try {
    await using server = await bedrockGateway(fake, env, undefined, { instance_role: true });
    for (const text of ["Hello instance", "Hello again"]) {
      const { status, body } = await askClaude(server, text);
      assert.equal(status, 200, JSON.stringify(body));
    }
    assert.deepEqual(seen, [
      "PUT /latest/api/token",
      "GET /latest/meta-data/iam/security-credentials/",
      "GET /latest/meta-data/iam/security-credentials/switchyard-ec2",
    ], "fetched once for both calls");
    assert.equal(fake.last.headers.get("x-amz-security-token"), "instance-session-token");
    assert.deepEqual(fake.violations, []);
  } finally {
    await imds.shutdown();
  }
  // Without instance_role, no keys and no container endpoint: disabled, as before.
  await using off = await bedrockGateway(fake, env);
  assert.equal((await askClaude(off, "Hi")).status, 404);
  assert.match(
    off.output.err,
    /provider \\"brk\\" disabled: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set/,
  );
});

/** STS's answer to AssumeRoleWithWebIdentity (as its Query API writes it), with `credentials`. */
function stsAnswer(credentials: AwsCredentials, expiration: Date): string {
  return `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:ai:switchyard</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/switchyard/switchyard-brk</Arn>
      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:switchyard-brk</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>${credentials.sessionToken}</SessionToken>
      <SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>
      <Expiration>${expiration.toISOString()}</Expiration>
      <AccessKeyId>${credentials.accessKeyId}</AccessKeyId>
    </Credentials>
    <Provider>arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`;
}

Deno.test("bedrock: on EKS with IRSA, the service account's token is exchanged at STS for the role's keys, read again at each renewal", async () => {
  await using fake = startFakeBedrock();
  const clock = new FakeClock();
  const tokenFile = await Deno.makeTempFile({ prefix: "irsa-token-" });
  await Deno.writeTextFile(tokenFile, "eyJhbGciOiJSUzI1NiJ9.first-token.sig\n");
  const asked: Record<string, string>[] = [];
  const sts = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const form = Object.fromEntries(new URLSearchParams(await request.text()));
    asked.push({ method: request.method, type: request.headers.get("content-type")!, ...form });
    const n = asked.length;
    // A session token as STS writes them: base64, with an escaped character in the XML.
    const credentials = {
      accessKeyId: `ASIAIRSAKEY${n}EXAMPLE`,
      secretAccessKey: `irsa-secret-${n}`,
      sessionToken: `FwoGZXIvYXdzE+irsa/token=${n}&`,
    };
    fake.credentials = credentials;
    const answer = stsAnswer(
      { ...credentials, sessionToken: credentials.sessionToken.replace("&", "&amp;") },
      new Date(clock.now() + 3_600_000),
    );
    return new Response(answer, { headers: { "content-type": "text/xml" } });
  });
  const env: Record<string, string> = {
    AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/switchyard",
    AWS_ENDPOINT_URL_STS: `http://127.0.0.1:${sts.addr.port}`,
    // Pod Identity's endpoint too: the web identity comes first, as in the AWS SDKs.
    AWS_CONTAINER_CREDENTIALS_FULL_URI: "http://127.0.0.1:9/never",
  };
  try {
    await using server = await bedrockGateway(fake, env, clock);
    const ask = (text: string) => askClaudeOk(server, text);
    await ask("Hello IRSA");
    await ask("Hello again");
    assert.equal(asked.length, 1, "one exchange for both calls");
    assert.deepEqual(asked[0], {
      method: "POST",
      type: "application/x-www-form-urlencoded; charset=utf-8",
      Action: "AssumeRoleWithWebIdentity",
      Version: "2011-06-15",
      RoleArn: "arn:aws:iam::123456789012:role/switchyard",
      RoleSessionName: "switchyard-brk",
      WebIdentityToken: "eyJhbGciOiJSUzI1NiJ9.first-token.sig",
    });
    assert.equal(fake.last.headers.get("x-amz-security-token"), "FwoGZXIvYXdzE+irsa/token=1&");
    // Kubernetes rotated the token; 56 minutes on, the renewal sends the new one.
    await Deno.writeTextFile(tokenFile, "eyJhbGciOiJSUzI1NiJ9.second-token.sig");
    clock.advance(56 * 60_000);
    await ask("Hello renewed");
    assert.equal(asked.length, 2);
    assert.equal(asked[1]!.WebIdentityToken, "eyJhbGciOiJSUzI1NiJ9.second-token.sig");
    assert.equal(fake.last.headers.get("x-amz-security-token"), "FwoGZXIvYXdzE+irsa/token=2&");
    assert.deepEqual(fake.violations, []);
    assert.ok(!/irsa-secret|second-token|first-token/.test(server.output.err), "no secret logged");
  } finally {
    await sts.shutdown();
    await Deno.remove(tokenFile);
  }
});

Deno.test("bedrock: a web identity STS refuses, or whose token file is missing, is a 502 saying why, never the token", async () => {
  await using fake = startFakeBedrock();
  const tokenFile = await Deno.makeTempFile({ prefix: "irsa-token-" });
  await Deno.writeTextFile(tokenFile, "eyJhbGciOiJSUzI1NiJ9.expired-token.sig");
  const sts = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () =>
    new Response(
      `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>ExpiredTokenException</Code><Message>Token expired: current date/time 1764400000 must be before the expiration date/time 1764390000</Message></Error>
  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
</ErrorResponse>`,
      { status: 400, headers: { "content-type": "text/xml" } },
    ));
  const env: Record<string, string> = {
    AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/switchyard",
    AWS_ENDPOINT_URL_STS: `http://127.0.0.1:${sts.addr.port}/`,
  };
  try {
    await using server = await bedrockGateway(fake, env);
    const refused = await askClaude(server, "Hi");
    assert.equal(refused.status, 502);
    assert.match(
      refused.body.error.message,
      /"brk" has no AWS credentials: STS refused AssumeRoleWithWebIdentity \(HTTP 400, ExpiredTokenException: Token expired: .*\)\. The operator must check the service account's IAM role\./,
    );
    assert.doesNotMatch(JSON.stringify(refused.body) + server.output.err, /expired-token/);
    await Deno.remove(tokenFile);
    const missing = await askClaude(server, "Hi");
    assert.equal(missing.status, 502);
    assert.match(
      missing.body.error.message,
      new RegExp(`the token file ${tokenFile} could not be read \\(no such file\\)`),
    );
    assert.equal(fake.received.length, 0, "nothing reached Bedrock unsigned");
  } finally {
    await sts.shutdown();
    await Deno.remove(tokenFile).catch(() => {});
  }
});

Deno.test("bedrock: on EKS with Pod Identity, the container endpoint gets the token file's token, read again at each renewal", async () => {
  await using fake = startFakeBedrock();
  const clock = new FakeClock();
  const tokenFile = await Deno.makeTempFile({ prefix: "pod-identity-token-" });
  await Deno.writeTextFile(tokenFile, "pod-identity-token-1\n");
  const auth: (string | null)[] = [];
  const agent = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    auth.push(request.headers.get("authorization"));
    const credentials = {
      accessKeyId: `ASIAPODKEY${auth.length}EXAMPLE`,
      secretAccessKey: `pod-secret-${auth.length}`,
      sessionToken: `pod-session-token-${auth.length}`,
    };
    fake.credentials = credentials;
    return Response.json({
      AccessKeyId: credentials.accessKeyId,
      SecretAccessKey: credentials.secretAccessKey,
      Token: credentials.sessionToken,
      AccountId: "123456789012",
      Expiration: new Date(clock.now() + 3_600_000).toISOString(),
    });
  });
  const env: Record<string, string> = {
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${agent.addr.port}/v1/credentials`,
    AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile,
    // The file's token wins over the variable's, as in the AWS SDKs.
    AWS_CONTAINER_AUTHORIZATION_TOKEN: "stale-variable-token",
  };
  try {
    await using server = await bedrockGateway(fake, env, clock);
    assert.equal((await askClaude(server, "Hello pod")).status, 200);
    await Deno.writeTextFile(tokenFile, "pod-identity-token-2");
    clock.advance(56 * 60_000);
    assert.equal((await askClaude(server, "Hello renewed")).status, 200);
    assert.deepEqual(auth, ["pod-identity-token-1", "pod-identity-token-2"]);
    assert.equal(fake.last.headers.get("x-amz-security-token"), "pod-session-token-2");
    assert.deepEqual(fake.violations, []);
  } finally {
    await agent.shutdown();
    await Deno.remove(tokenFile);
  }
});

Deno.test("bedrock: a model with routes counts tokens with Bedrock's CountTokens, falling back to the next route", async () => {
  await using fake = startFakeBedrock();
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: FAKE_AWS_CREDENTIALS.secretAccessKey,
  };
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "brk",
        style: "bedrock",
        region: FAKE_REGION,
        base_url: fake.url,
        max_retries: 0,
      });
      (raw.models as unknown[]).push({
        id: "claude",
        chat_completions: true,
        routes: [
          { provider: "brk", upstream_model: "anthropic.claude-down-v1:0" },
          { provider: "brk", upstream_model: CLAUDE, priority: 1 },
        ],
      });
    }),
    env: (name) => env[name],
  });
  fake.faults = [{ status: 500 }];
  const res = await fetch(`${server.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: "claude",
      messages: [{ role: "user", content: "Count these words for me, please." }],
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(
    fake.received.map((r) => r.path),
    [
      "/model/anthropic.claude-down-v1%3A0/count-tokens",
      "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens",
    ],
  );
  const converse = (fake.last.body as { input: { converse: unknown } }).input.converse;
  assert.equal((await res.json()).input_tokens, fakeTokenCount(converse));
});
