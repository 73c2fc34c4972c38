/**
 * `POST /v1/chat/completions` end to end over a real port, with the official `openai` client as
 * the caller and raw fetch for the SSE bytes, against the built-in simulator.
 */
import assert from "node:assert/strict";
import { inlineImageWork } from "../src/images/work.ts";
import OpenAI, { APIError } from "npm:openai@7.55.0";
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "npm:openai@7.55.0/resources/chat/completions";
import { SseDecoderStream } from "../src/http/sse.ts";
import type { Provider } from "../src/providers/types.ts";
import { SimulatorProvider } from "../src/providers/simulator/provider.ts";
import { logRecord, openaiClient, postChat } from "./support/client.ts";
import { dataUrl, gifBytes, pngBytes } from "./support/images.ts";
import { schemaErrors } from "./support/json_schema.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";
import { waitFor } from "./support/wait.ts";
import { FetchHttpClient } from "../src/http/client/fetch.ts";

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };

/** The test config with a tools-only model, limits no test reaches, and the caller's changes. */
function config(patch: (raw: Record<string, unknown>) => void = () => {}) {
  return testConfig((raw) => {
    (raw.models as Record<string, unknown>[]).push({
      id: "sim-tools",
      provider: "sim",
      chat_completions: true,
      function_calling: true,
    });
    raw.limits = {
      anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
      key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
    };
    patch(raw);
  });
}

async function start(patch?: (raw: Record<string, unknown>) => void): Promise<TestServer> {
  return await startServer({ config: config(patch) });
}

const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 5 },
      },
      required: ["city", "unit"],
    },
  },
};
const TIME: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_time",
    parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
  },
};

/** Text, tool calls, finish reasons and usage a stream adds up to. */
async function drain(stream: AsyncIterable<ChatCompletionChunk>) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  let content = "";
  const calls: { index: number; id: string; name: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? "";
    for (const t of delta?.tool_calls ?? []) {
      if (t.id) {
        assert.equal(t.type, "function");
        assert.equal(t.function?.arguments, "", "a call's first fragment has empty arguments");
        calls.push({ index: t.index, id: t.id, name: t.function!.name!, arguments: "" });
      } else {
        assert.equal(t.function?.name, undefined, "later fragments carry arguments only");
        calls.find((c) => c.index === t.index)!.arguments += t.function?.arguments ?? "";
      }
    }
  }
  const choiceChunks = chunks.filter((c) => c.choices.length > 0);
  const finishes = choiceChunks.map((c) => c.choices[0]!.finish_reason);
  assert.ok(finishes.slice(0, -1).every((f) => f === null), "earlier chunks: finish_reason null");
  assert.notEqual(finishes.at(-1), null, "the last choice chunk carries the finish_reason");
  assert.equal(choiceChunks[0]!.choices[0]!.delta.role, "assistant");
  return { chunks, content, calls, finish: finishes.at(-1), usage: chunks.at(-1)!.usage };
}

Deno.test("plain chat through the openai client, anonymously and with a key", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "What colour is the sea at night?" },
  ];
  const completion = await client.chat.completions.create({ model: "sim-chat", messages });
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.model, "sim-chat");
  assert.match(completion.id, /^chatcmpl-/);
  assert.equal(typeof completion.created, "number");
  const choice = completion.choices[0]!;
  assert.equal(choice.index, 0);
  assert.equal(choice.finish_reason, "stop");
  assert.equal(choice.message.role, "assistant");
  assert.match(choice.message.content!, /What colour is the sea at night\?/);
  const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!;
  assert.ok(prompt_tokens > 0 && completion_tokens > 0);
  assert.equal(total_tokens, prompt_tokens + completion_tokens);
  const again = await client.chat.completions.create({ model: "sim-chat", messages });
  assert.equal(again.choices[0]!.message.content, choice.message.content, "deterministic");
  assert.notEqual(again.id, completion.id);
  const anonymous = await logRecord(server, completion._request_id ?? null);
  assert.equal(anonymous.key_id, null);

  const { key, record } = await server.app.services.keys.create({ name: "t" });
  const keyed = openaiClient(server, { apiKey: key });
  const viaKey = await keyed.chat.completions.create({ model: "sim-keyed", messages });
  assert.equal(viaKey.model, "sim-keyed");
  assert.equal((await logRecord(server, viaKey._request_id ?? null)).key_id, record.id);
});

Deno.test("the same request streamed gives the same text, and include_usage the same usage", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const body = {
    model: "sim-chat",
    messages: [{ role: "user" as const, content: "Describe a lighthouse in one breath ✓." }],
  };
  const whole = await client.chat.completions.create(body);
  const streamed = await drain(
    await client.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  assert.equal(streamed.content, whole.choices[0]!.message.content);
  assert.equal(streamed.finish, "stop");
  assert.deepEqual(streamed.usage, whole.usage);
  assert.deepEqual(streamed.chunks.at(-1)!.choices, []);
  const contentChunks = streamed.chunks.filter((c) => c.choices[0]?.delta.content);
  assert.equal(whole.usage!.completion_tokens, contentChunks.length);
  assert.ok(
    streamed.chunks.every((c) => c.model === "sim-chat" && c.id === streamed.chunks[0]!.id),
  );

  const noUsage = await drain(await client.chat.completions.create({ ...body, stream: true }));
  assert.equal(noUsage.content, streamed.content);
  assert.ok(noUsage.chunks.every((c) => c.choices.length === 1 && !c.usage));
});

Deno.test("a full tool round trip with parallel calls, non-streamed", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const tools = [WEATHER, TIME];
  const messages: ChatCompletionMessageParam[] = [
    { role: "user", content: "Use get_weather for city=Lisbon and get_time for zone=WET." },
  ];
  const first = await client.chat.completions.create({ model: "sim-tools", messages, tools });
  const choice = first.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.content, null);
  const calls = choice.message.tool_calls!;
  assert.equal(calls.length, 2);
  assert.deepEqual(calls.map((c) => c.type === "function" && c.function.name), [
    "get_weather",
    "get_time",
  ]);
  const results: Record<string, string> = {};
  for (const call of calls) {
    assert.equal(call.type, "function");
    if (call.type !== "function") continue;
    const args = JSON.parse(call.function.arguments);
    const tool = tools.find((t) =>
      t.type === "function" && t.function.name === call.function.name
    )!;
    assert.deepEqual(
      schemaErrors(
        (tool as { function: { parameters: Record<string, unknown> } }).function.parameters,
        args,
      ),
      [],
    );
    results[call.id] = JSON.stringify({ for: call.function.name, args, value: call.id.length });
  }
  assert.equal(
    JSON.parse(calls[0]!.type === "function" ? calls[0]!.function.arguments : "").city,
    "Lisbon",
  );

  messages.push(choice.message);
  for (const call of calls) {
    messages.push({ role: "tool", tool_call_id: call.id, content: results[call.id]! });
  }
  const final = await client.chat.completions.create({ model: "sim-tools", messages, tools });
  assert.equal(final.choices[0]!.finish_reason, "stop");
  const answer = final.choices[0]!.message.content!;
  for (const call of calls) {
    if (call.type === "function") {
      assert.ok(
        answer.includes(`The ${call.function.name} tool returned ${results[call.id]}`),
        answer,
      );
    }
  }
});

Deno.test("a full tool round trip, streamed: OpenAI's tool-call deltas with distinct indexes", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const tools = [WEATHER, TIME];
  const messages: ChatCompletionMessageParam[] = [
    { role: "user", content: "Please call get_time and get_weather (city=Kyoto)." },
  ];
  const nonStream = await client.chat.completions.create({ model: "sim-vision", messages, tools });
  const first = await drain(
    await client.chat.completions.create({ model: "sim-vision", messages, tools, stream: true }),
  );
  assert.equal(first.finish, "tool_calls");
  assert.equal(first.content, "");
  assert.deepEqual(first.calls.map((c) => c.index), [0, 1]);
  assert.deepEqual(first.calls.map((c) => c.name), ["get_time", "get_weather"]);
  assert.notEqual(first.calls[0]!.id, first.calls[1]!.id);
  assert.deepEqual(
    first.calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    })),
    nonStream.choices[0]!.message.tool_calls,
  );
  const opening = first.chunks[0]!.choices[0]!.delta;
  assert.equal(opening.role, "assistant");
  assert.equal(opening.tool_calls?.[0]?.index, 0);
  assert.equal(JSON.parse(first.calls[1]!.arguments).city, "Kyoto");

  messages.push({
    role: "assistant",
    content: null,
    tool_calls: first.calls.map((c) => ({
      id: c.id,
      type: "function" as const,
      function: { name: c.name, arguments: c.arguments },
    })),
  });
  messages.push({ role: "tool", tool_call_id: first.calls[0]!.id, content: "09:15 JST" });
  messages.push({ role: "tool", tool_call_id: first.calls[1]!.id, content: "light rain, 14°C" });
  const final = await drain(
    await client.chat.completions.create({ model: "sim-vision", messages, tools, stream: true }),
  );
  assert.equal(final.finish, "stop");
  assert.match(final.content, /The get_time tool returned 09:15 JST\./);
  assert.match(final.content, /The get_weather tool returned light rain, 14°C\./);
});

Deno.test("image input is described with its format, size and dimensions", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const png = pngBytes(640, 480);
  const completion = await client.chat.completions.create({
    model: "sim-vision",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What do you see?" },
        { type: "image_url", image_url: { url: dataUrl("image/png", png) } },
        {
          type: "image_url",
          image_url: { url: dataUrl("image/gif", gifBytes(300, 200)), detail: "low" },
        },
      ],
    }],
  });
  const text = completion.choices[0]!.message.content!;
  assert.match(text, new RegExp(`image 1 is a PNG of ${png.length} bytes, 640 × 480 pixels`));
  assert.match(text, /image 2 is a GIF of 14 bytes, 300 × 200 pixels/);
});

Deno.test("stop and max_tokens end the reply early, streamed or not", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const body = {
    model: "sim-chat",
    messages: [{ role: "user" as const, content: "Count the stars." }],
  };
  const full = (await client.chat.completions.create(body)).choices[0]!.message.content!;

  const stopped = await client.chat.completions.create({ ...body, stop: ["simulated", "stars"] });
  assert.equal(stopped.choices[0]!.finish_reason, "stop");
  assert.equal(stopped.choices[0]!.message.content, full.slice(0, full.indexOf("simulated")));
  const stoppedStream = await drain(
    await client.chat.completions.create({ ...body, stop: "simulated", stream: true }),
  );
  assert.equal(stoppedStream.content, stopped.choices[0]!.message.content);

  const short = await client.chat.completions.create({ ...body, max_tokens: 4 });
  assert.equal(short.choices[0]!.finish_reason, "length");
  assert.equal(short.usage!.completion_tokens, 4);
  assert.ok(full.startsWith(short.choices[0]!.message.content!));
  const shortStream = await drain(
    await client.chat.completions.create({
      ...body,
      max_completion_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  assert.equal(shortStream.finish, "length");
  assert.equal(shortStream.content, short.choices[0]!.message.content);
  assert.equal(shortStream.usage!.completion_tokens, 4);
});

/** Calls the API and returns the client's error. */
async function apiError(client: OpenAI, body: Record<string, unknown>): Promise<APIError> {
  try {
    await client.chat.completions.create(body as never);
  } catch (e) {
    assert.ok(e instanceof APIError, `expected an APIError, got ${e}`);
    return e;
  }
  throw new Error("the request succeeded");
}

Deno.test("every validation and capability error has its status, type, code and param", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const user = (content: unknown) => [{ role: "user", content }];
  const png = dataUrl("image/png", pngBytes(8, 8));
  const cases: [Record<string, unknown>, number, string, string | null, string | null][] = [
    [{ messages: user("hi") }, 400, "invalid_request_error", "missing_required_parameter", "model"],
    [
      { model: "sim-chat" },
      400,
      "invalid_request_error",
      "missing_required_parameter",
      "messages",
    ],
    [
      { model: "sim-chat", messages: [] },
      400,
      "invalid_request_error",
      "invalid_value",
      "messages",
    ],
    [
      { model: "sim-chat", messages: [{ role: "robot", content: "x" }] },
      400,
      "invalid_request_error",
      "invalid_value",
      "messages[0].role",
    ],
    [
      {
        model: "sim-vision",
        messages: [
          { role: "system", content: "s" },
          { role: "assistant", content: "a" },
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }],
          },
        ],
      },
      400,
      "invalid_request_error",
      "invalid_image",
      "messages[2].content[0].image_url.url",
    ],
    [
      { model: "sim-chat", messages: user("x"), temperature: 3 },
      400,
      "invalid_request_error",
      "invalid_value",
      "temperature",
    ],
    [
      { model: "sim-chat", messages: user("x"), max_tokens: 0 },
      400,
      "invalid_request_error",
      "invalid_value",
      "max_tokens",
    ],
    [
      { model: "sim-chat", messages: user("x"), stop: ["a", "b", "c", "d", "e"] },
      400,
      "invalid_request_error",
      "invalid_value",
      "stop",
    ],
    [
      { model: "sim-chat", messages: user("x"), n: 3 },
      400,
      "invalid_request_error",
      "invalid_value",
      "n",
    ],
    [
      { model: "sim-chat", messages: user("x"), stream: "yes" },
      400,
      "invalid_request_error",
      "invalid_type",
      "stream",
    ],
    [
      {
        model: "sim-tools",
        messages: user("x"),
        tools: [{ type: "function", function: { name: "bad name" } }],
      },
      400,
      "invalid_request_error",
      "invalid_value",
      "tools[0].function.name",
    ],
    [
      {
        model: "sim-tools",
        messages: user("x"),
        tools: [WEATHER],
        tool_choice: { type: "function", function: { name: "nope" } },
      },
      400,
      "invalid_request_error",
      "invalid_value",
      "tool_choice.function.name",
    ],
    [
      {
        model: "sim-tools",
        messages: [{ role: "user", content: "x" }, {
          role: "tool",
          tool_call_id: "call_x",
          content: "r",
        }],
      },
      400,
      "invalid_request_error",
      "invalid_value",
      "messages[1].tool_call_id",
    ],
    [
      { model: "no-such-model", messages: user("x") },
      404,
      "invalid_request_error",
      "model_not_found",
      "model",
    ],
    [
      { model: "sim-moderation", messages: user("x") },
      400,
      "invalid_request_error",
      "unsupported_capability",
      "model",
    ],
    [
      {
        model: "sim-chat",
        messages: user([{ type: "text", text: "see" }, {
          type: "image_url",
          image_url: { url: png },
        }]),
      },
      400,
      "invalid_request_error",
      "unsupported_capability",
      "messages[0].content[1]",
    ],
    [
      { model: "sim-chat", messages: user("x"), tools: [WEATHER] },
      400,
      "invalid_request_error",
      "unsupported_capability",
      "tools",
    ],
    [
      {
        model: "sim-chat",
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c1", content: "r" },
        ],
      },
      400,
      "invalid_request_error",
      "unsupported_capability",
      "messages[1].tool_calls",
    ],
    [
      { model: "sim-keyed", messages: user("x") },
      401,
      "authentication_error",
      "invalid_api_key",
      null,
    ],
  ];
  for (const [body, status, type, code, param] of cases) {
    const e = await apiError(client, body);
    const what = JSON.stringify(body).slice(0, 160);
    assert.equal(e.status, status, what);
    assert.equal(e.type, type, what);
    assert.equal(e.code ?? null, code, what);
    assert.equal(e.param ?? null, param, what);
    assert.ok(e.message.length > 10, what);
    assert.match(e.headers?.get("x-request-id") ?? "", /^req_/);
  }
  const streamed = await apiError(client, {
    model: "no-such-model",
    messages: user("x"),
    stream: true,
  });
  assert.equal(
    streamed.status,
    404,
    "a stream that cannot start is a JSON error, not a 200 stream",
  );
});

Deno.test("malformed bodies: bad JSON, not an object, wrong Content-Type, too large", async () => {
  await using server = await start((raw) => {
    raw.server = { port: 0, hostname: "127.0.0.1", max_body_bytes: 4096 };
  });
  const check = async (res: Response, status: number, code: string | null, message: RegExp) => {
    assert.equal(res.status, status);
    const body = await res.json();
    assert.equal(body.error.type, "invalid_request_error");
    assert.equal(body.error.code, code);
    assert.match(body.error.message, message);
  };
  await check(
    await postChat(server, '{"model": "sim-chat",'),
    400,
    "invalid_json",
    /parse the JSON body/,
  );
  await check(
    await postChat(server, "[1, 2]"),
    400,
    "invalid_json",
    /must be a JSON object, not an array/,
  );
  await check(await postChat(server, ""), 400, "invalid_json", /empty/);
  await check(
    await postChat(server, { model: "sim-chat", messages: [{ role: "user", content: "hi" }] }, {
      headers: { "content-type": "text/plain" },
    }),
    400,
    "invalid_content_type",
    /Content-Type must be application\/json/,
  );
  await check(
    await postChat(server, {
      model: "sim-chat",
      messages: [{ role: "user", content: "x".repeat(5000) }],
    }),
    413,
    "request_too_large",
    /larger than the limit of 4096 bytes/,
  );
  const ok = await postChat(server, {
    model: "sim-chat",
    messages: [{ role: "user", content: "hi" }],
  }, {
    headers: { "content-type": "application/json; charset=utf-8" },
  });
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
});

Deno.test("the SSE bytes: framing, content type, one JSON chunk per event, [DONE] last", async () => {
  await using server = await start();
  const res = await postChat(server, {
    model: "sim-chat",
    messages: [{ role: "user", content: "Say hi — with an em dash and ünïcödé." }],
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
  assert.match(res.headers.get("x-request-id")!, /^req_/);
  const text = await res.text();
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  const events = text.split("\n\n");
  assert.equal(events.pop(), "");
  assert.equal(events.pop(), "data: [DONE]");
  const chunks = events.map((e) => {
    assert.ok(e.startsWith("data: "), `every event is one data line: ${e.slice(0, 40)}`);
    assert.ok(!e.includes("\n"), "one line per event");
    return JSON.parse(e.slice("data: ".length));
  });
  const ids = new Set(chunks.map((c) => c.id));
  assert.equal(ids.size, 1);
  assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "sim-chat"));
  assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
  assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + usage.usage.completion_tokens);
  const finishChunk = chunks.at(-2);
  assert.deepEqual(finishChunk.choices[0].delta, {});
  assert.equal(finishChunk.choices[0].finish_reason, "stop");
  const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
  assert.match(content, /Say hi — with an em dash and ünïcödé\./);

  const decoded: string[] = [];
  const again = await postChat(server, {
    model: "sim-chat",
    messages: [{ role: "user", content: "Say hi — with an em dash and ünïcödé." }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const event of again.body!.pipeThrough(new SseDecoderStream())) {
    decoded.push(event.data);
  }
  assert.equal(decoded.length, chunks.length + 1);
  assert.equal(decoded.at(-1), "[DONE]");
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.stream, true);
  assert.equal(record.completion_tokens, usage.usage.completion_tokens);
});

/** The simulator, wrapped to report when its signal fires. */
function watchedSimulator(tokenDelayMs: number) {
  const aborted = Promise.withResolvers<void>();
  const cfg = config((raw) => {
    raw.providers = [{ id: "sim", style: "simulator", token_delay_ms: tokenDelayMs }];
  });
  let sim: Provider | undefined;
  const wrapper: Provider = {
    id: "sim",
    chat: (req, ctx) => sim!.chat(req, ctx),
    chatStream: (req, ctx) => {
      ctx.signal.addEventListener("abort", () => aborted.resolve());
      return sim!.chatStream(req, ctx);
    },
  };
  return {
    config: cfg,
    aborted: aborted.promise,
    wrapper,
    bind(server: TestServer) {
      sim = new SimulatorProvider({
        config: cfg.providers[0]!,
        apiKey: null,
        http: new FetchHttpClient(),
        clock: server.clock,
        logger: server.app.services.logger,
        images: inlineImageWork,
      });
    },
  };
}

Deno.test("a client that leaves mid-stream aborts the simulator's generation (openai client)", async () => {
  const watched = watchedSimulator(20);
  await using server = await startServer({
    config: watched.config,
    providers: new Map([["sim", watched.wrapper]]),
  });
  watched.bind(server);
  const client = openaiClient(server);
  const stream = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Tell me a long story about ships, harbours and tides." }],
    max_tokens: 200,
    stream: true,
  });
  const requestId = stream._request_id ?? null;
  let seen = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.model, "sim-chat");
    if (++seen === 3) break;
  }
  await watched.aborted;
  const record = await logRecord(server, requestId);
  assert.equal(record.status, 499);
  assert.equal(record.error, "client_disconnected");
  assert.equal(record.stream, true);
});

Deno.test("a client that leaves mid-stream aborts the simulator's generation (raw fetch)", async () => {
  const watched = watchedSimulator(20);
  await using server = await startServer({
    config: watched.config,
    providers: new Map([["sim", watched.wrapper]]),
  });
  watched.bind(server);
  const controller = new AbortController();
  const res = await postChat(server, {
    model: "sim-chat",
    messages: [{ role: "user", content: "Another long story, please, about lighthouses." }],
    stream: true,
  }, { signal: controller.signal });
  const reader = res.body!.pipeThrough(new SseDecoderStream()).getReader();
  const first = await reader.read();
  assert.equal(JSON.parse(first.value!.data).choices[0].delta.role, "assistant");
  controller.abort();
  await watched.aborted;
  const record = await waitFor(
    () => server.output.records().find((r) => r.request_id === res.headers.get("x-request-id")),
    "the 499 record",
  );
  assert.equal(record.status, 499);
});

Deno.test("reasoning_effort: reasoning_content and reasoning tokens, streamed alike; sent back, accepted", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const body = {
    model: "sim-chat",
    messages: [{ role: "user" as const, content: "Plan a picnic." }],
    reasoning_effort: "low" as const,
  };
  const whole = await client.chat.completions.create(body);
  const message = whole.choices[0]!.message as typeof whole.choices[0]["message"] & {
    reasoning_content?: string;
  };
  assert.match(message.reasoning_content ?? "", /The user wrote: "Plan a picnic\."/);
  assert.ok(whole.usage!.completion_tokens_details!.reasoning_tokens! > 0);
  assert.ok(!message.content!.includes("The user wrote"), "reasoning is not the answer");

  const chunks: ChatCompletionChunk[] = [];
  for await (
    const chunk of await client.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    })
  ) chunks.push(chunk);
  const deltas = chunks.map((c) => c.choices[0]?.delta as { reasoning_content?: string });
  assert.equal(deltas.map((d) => d?.reasoning_content ?? "").join(""), message.reasoning_content);
  assert.deepEqual(chunks.at(-1)!.usage, whole.usage);

  const off = await client.chat.completions.create({
    ...body,
    reasoning_effort: undefined,
    reasoning: { enabled: false },
  } as never) as typeof whole;
  assert.equal(
    (off.choices[0]!.message as { reasoning_content?: string }).reasoning_content,
    undefined,
  );

  const next = await client.chat.completions.create({
    model: "sim-chat",
    messages: [
      ...body.messages,
      {
        role: "assistant",
        content: message.content,
        reasoning_content: message.reasoning_content,
      } as never,
      { role: "user", content: "And if it rains?" },
    ],
  });
  assert.equal(next.choices[0]!.finish_reason, "stop");
});

Deno.test("response_format json_schema: the answer is JSON of the schema, streamed or not", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 3 } },
    required: ["city", "days"],
    additionalProperties: false,
  };
  const body = {
    model: "sim-chat",
    messages: [{ role: "user" as const, content: "Where shall we go?" }],
    response_format: {
      type: "json_schema" as const,
      json_schema: { name: "trip", schema, strict: true },
    },
  };
  const whole = await client.chat.completions.create(body);
  const answer = JSON.parse(whole.choices[0]!.message.content!);
  assert.deepEqual(schemaErrors(schema, answer), []);
  const streamed = await drain(await client.chat.completions.create({ ...body, stream: true }));
  assert.equal(streamed.content, whole.choices[0]!.message.content);
  const json = await client.chat.completions.create({
    ...body,
    response_format: { type: "json_object" },
  });
  assert.equal(typeof JSON.parse(json.choices[0]!.message.content!), "object");
});

Deno.test("https image URLs are accepted for image_input models and never fetched", async () => {
  await using server = await start();
  const client = openaiClient(server);
  const completion = await client.chat.completions.create({
    model: "sim-vision",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Describe it." },
        { type: "image_url", image_url: { url: "https://images.invalid/cat.png" } },
      ],
    }],
  });
  assert.match(
    completion.choices[0]!.message.content!,
    /https:\/\/images\.invalid\/cat\.png, which the simulator does not fetch/,
  );
});

Deno.test("unknown fields, cache_control and tool strictness pass validation; default_max_tokens applies", async () => {
  await using server = await start((raw) => {
    const models = raw.models as Record<string, unknown>[];
    models.find((m) => m.id === "sim-tools")!.default_max_tokens = 3;
  });
  const res = await postChat(server, {
    model: "sim-tools",
    messages: [{
      role: "system",
      content: [{ type: "text", text: "Rules.", cache_control: { type: "ephemeral" } }],
    }, {
      role: "user",
      content: "Count the waves.",
      cache_control: { type: "ephemeral", ttl: "1h" },
    }],
    tools: [{
      ...TIME,
      function: { ...TIME.function, strict: true },
      cache_control: { type: "ephemeral" },
    }],
    tool_choice: "none",
    service_tier: "auto",
    store: false,
    metadata: { run: "e2e" },
  });
  assert.equal(res.status, 200);
  const completion = await res.json();
  assert.equal(completion.choices[0].finish_reason, "length");
  assert.equal(completion.usage.completion_tokens, 3, "the model's default_max_tokens");
});
