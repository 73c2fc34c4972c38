import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { inlineImageWork } from "../../../src/images/work.ts";
import type { ModelRecord } from "../../../src/catalogue/model.ts";
import { simulateChat, simulateChatStream } from "../../../src/providers/simulator/chat.ts";
import type { SimulatorOptions } from "../../../src/providers/simulator/provider.ts";
import type { CallContext } from "../../../src/providers/types.ts";
import { parseChatRequest } from "../../../src/routes/chat_request.ts";
import type { ChatChunk, ChatCompletion, ChatRequest } from "../../../src/types/openai.ts";
import { dataUrl, gifBytes, jpegBytes, pngBytes } from "../../support/images.ts";
import { schemaErrors } from "../../support/json_schema.ts";
import { FakeClock, testConfig } from "../../support/server.ts";

const config = testConfig();
const MODEL: ModelRecord = {
  ...config.models.find((m) => m.id === "sim-vision")!,
  created: 0,
  source: "config",
};
const OPTIONS: SimulatorOptions = {
  tokenDelayMs: 0,
  clock: new FakeClock(),
  images: inlineImageWork,
};

function call(signal = new AbortController().signal): CallContext {
  return { signal, requestId: "req_0123", upstreamModel: MODEL.upstream_model, model: MODEL };
}

function request(extra: Record<string, unknown> = {}): ChatRequest {
  return parseChatRequest({
    model: MODEL.id,
    messages: [{ role: "user", content: "Tell me about the harbour at dusk." }],
    ...extra,
  });
}

async function collect(req: ChatRequest, options = OPTIONS): Promise<ChatChunk[]> {
  const out: ChatChunk[] = [];
  for await (const chunk of simulateChatStream(req, call(), options)) out.push(chunk);
  return out;
}

/** What a stream adds up to: the text, the tool calls, the finish reason and the usage. */
function assemble(chunks: ChatChunk[]) {
  let content = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? "";
    for (const t of delta?.tool_calls ?? []) {
      if (t.id) calls[t.index] = { id: t.id, name: t.function!.name!, arguments: "" };
      calls[t.index]!.arguments += t.function?.arguments ?? "";
    }
  }
  const finishes = chunks.map((c) => c.choices[0]?.finish_reason ?? null);
  return { content, calls, finishes, usage: chunks.at(-1)!.usage };
}

const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer", minimum: 1, maximum: 7 },
        unit: { type: "string", enum: ["c", "f"] },
      },
      required: ["city", "days"],
    },
  },
};
const TIME_TOOL = {
  type: "function",
  function: {
    name: "get_time",
    parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
  },
};

Deno.test("the simulator answers from the conversation, the same way every time", async () => {
  const a = await simulateChat(request(), call(), OPTIONS);
  const b = await simulateChat(request(), call(), OPTIONS);
  assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
  const other = await simulateChat(
    request({ messages: [{ role: "user", content: "Something else entirely." }] }),
    call(),
    OPTIONS,
  );
  assert.notEqual(other.choices[0]!.message.content, a.choices[0]!.message.content);
  assert.match(a.choices[0]!.message.content!, /Tell me about the harbour at dusk\./);
  assert.match(a.choices[0]!.message.content!, /sim-vision/);
  assert.equal(a.id, "chatcmpl-0123");
  assert.equal(a.object, "chat.completion");
  assert.equal(a.model, "sim-vision");
  assert.equal(a.created, Math.floor(OPTIONS.clock.now() / 1000));
  assert.deepEqual(Object.keys(a.choices[0]!), ["index", "message", "logprobs", "finish_reason"]);
  assert.equal(a.choices[0]!.finish_reason, "stop");
  assert.equal(a.choices[0]!.message.refusal, null);
  assert.equal(a.usage.total_tokens, a.usage.prompt_tokens + a.usage.completion_tokens);
});

Deno.test("the stream carries the same text, one token per chunk, in OpenAI's chunk shape", async () => {
  const whole = await simulateChat(request(), call(), OPTIONS);
  const chunks = await collect(request());
  const { content, finishes, usage } = assemble(chunks);
  assert.equal(content, whole.choices[0]!.message.content);
  assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: "assistant", content: "" });
  for (const chunk of chunks) {
    assert.equal(chunk.id, "chatcmpl-0123");
    assert.equal(chunk.object, "chat.completion.chunk");
    assert.equal(chunk.model, "sim-vision");
    assert.equal(chunk.created, whole.created);
  }
  const last = chunks.at(-2)!;
  assert.deepEqual(last.choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
  assert.ok(finishes.slice(0, -2).every((f) => f === null));
  assert.deepEqual(chunks.at(-1)!.choices, []);
  assert.deepEqual(usage, whole.usage);
  const contentChunks = chunks.filter((c) => c.choices[0]?.delta.content);
  assert.equal(usage!.completion_tokens, contentChunks.length);
});

Deno.test("max_tokens stops early with finish_reason length", async () => {
  const full = (await simulateChat(request(), call(), OPTIONS)).choices[0]!.message.content!;
  const cut = await simulateChat(request({ max_tokens: 3 }), call(), OPTIONS);
  assert.equal(cut.choices[0]!.finish_reason, "length");
  assert.equal(cut.usage.completion_tokens, 3);
  assert.ok(full.startsWith(cut.choices[0]!.message.content!));
  assert.ok(cut.choices[0]!.message.content!.length < full.length);
  const streamed = assemble(await collect(request({ max_tokens: 3 })));
  assert.equal(streamed.content, cut.choices[0]!.message.content);
  assert.equal(streamed.finishes.at(-2), "length");
});

Deno.test("stop cuts the reply before the first stop sequence", async () => {
  const full = (await simulateChat(request(), call(), OPTIONS)).choices[0]!.message.content!;
  const stopped = await simulateChat(request({ stop: ["harbour", "simulated"] }), call(), OPTIONS);
  const text = stopped.choices[0]!.message.content!;
  assert.equal(stopped.choices[0]!.finish_reason, "stop");
  assert.equal(text, full.slice(0, full.indexOf("simulated")));
  assert.ok(!text.includes("simulated"));
  assert.equal(assemble(await collect(request({ stop: ["harbour", "simulated"] }))).content, text);
  const unmatched = await simulateChat(request({ stop: "zebra" }), call(), OPTIONS);
  assert.equal(unmatched.choices[0]!.message.content, full);
});

Deno.test("tools named in the last user message are called with schema-valid arguments", async () => {
  const req = request({
    messages: [{ role: "user", content: "Use get_time (zone=UTC) and get_weather for city=Oslo." }],
    tools: [WEATHER_TOOL, TIME_TOOL],
  });
  const result = await simulateChat(req, call(), OPTIONS);
  const choice = result.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.content, null);
  const calls = choice.message.tool_calls!;
  assert.deepEqual(calls.map((c) => c.function.name), ["get_time", "get_weather"]);
  assert.deepEqual(JSON.parse(calls[0]!.function.arguments), { zone: "UTC" });
  const weather = JSON.parse(calls[1]!.function.arguments);
  assert.deepEqual(schemaErrors(WEATHER_TOOL.function.parameters, weather), []);
  assert.equal(weather.city, "Oslo");
  assert.notEqual(calls[0]!.id, calls[1]!.id);
  assert.match(calls[0]!.id, /^call_[0-9A-Za-z]{24}$/);

  const chunks = await collect(req);
  const streamed = assemble(chunks);
  assert.deepEqual(
    streamed.calls,
    calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  );
  const first = chunks[0]!.choices[0]!.delta;
  assert.equal(first.role, "assistant");
  assert.deepEqual(first.tool_calls, [{
    index: 0,
    id: calls[0]!.id,
    type: "function",
    function: { name: "get_time", arguments: "" },
  }]);
  const second = chunks.find((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 1)!;
  assert.deepEqual(second.choices[0]!.delta.tool_calls![0]!.function, {
    name: "get_weather",
    arguments: "",
  });
  for (const c of chunks.slice(1)) {
    const t = c.choices[0]?.delta.tool_calls?.[0];
    if (t && !t.id) assert.deepEqual(Object.keys(t), ["index", "function"]);
  }
  assert.equal(streamed.finishes.at(-2), "tool_calls");
  assert.equal(streamed.usage!.completion_tokens, result.usage.completion_tokens);

  const single = await simulateChat(
    request({ ...req, messages: req.messages, tools: req.tools, parallel_tool_calls: false }),
    call(),
    OPTIONS,
  );
  assert.equal(single.choices[0]!.message.tool_calls!.length, 1);
});

Deno.test("tool_choice decides whether and which tool is called", async () => {
  const tools = [WEATHER_TOOL, TIME_TOOL];
  const plain = await simulateChat(request({ tools }), call(), OPTIONS);
  assert.equal(plain.choices[0]!.finish_reason, "stop");
  const required = await simulateChat(request({ tools, tool_choice: "required" }), call(), OPTIONS);
  assert.deepEqual(required.choices[0]!.message.tool_calls!.map((c) => c.function.name), [
    "get_weather",
  ]);
  const named = await simulateChat(
    request({ tools, tool_choice: { type: "function", function: { name: "get_time" } } }),
    call(),
    OPTIONS,
  );
  assert.deepEqual(named.choices[0]!.message.tool_calls!.map((c) => c.function.name), ["get_time"]);
  const none = await simulateChat(
    request({
      tools,
      tool_choice: "none",
      messages: [{ role: "user", content: "call get_time" }],
    }),
    call(),
    OPTIONS,
  );
  assert.equal(none.choices[0]!.message.tool_calls, undefined);
});

Deno.test("after tool results the simulator answers with them", async () => {
  const messages = [
    { role: "user", content: "What is the weather? Use get_weather." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_a",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Oslo","days":1}' },
      }],
    },
    { role: "tool", tool_call_id: "call_a", content: '{"temp":-3,"sky":"snow"}' },
  ];
  const answer = await simulateChat(request({ messages, tools: [WEATHER_TOOL] }), call(), OPTIONS);
  const text = answer.choices[0]!.message.content!;
  assert.equal(answer.choices[0]!.finish_reason, "stop");
  assert.match(text, /The get_weather tool returned \{"temp":-3,"sky":"snow"\}\./);
  const forced = await simulateChat(
    request({ messages, tools: [WEATHER_TOOL], tool_choice: "required" }),
    call(),
    OPTIONS,
  );
  assert.equal(forced.choices[0]!.finish_reason, "tool_calls");
});

Deno.test("the simulator describes each image: format, bytes, width and height", async () => {
  const png = pngBytes(640, 480);
  const req = request({
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What are these?" },
        { type: "image_url", image_url: { url: dataUrl("image/png", png) } },
        { type: "image_url", image_url: { url: dataUrl("image/gif", gifBytes(32, 16)) } },
        { type: "image_url", image_url: { url: dataUrl("image/jpeg", jpegBytes(1920, 1080)) } },
      ],
    }],
  });
  const text = (await simulateChat(req, call(), OPTIONS)).choices[0]!.message.content!;
  assert.match(text, /You sent 3 images/);
  assert.match(text, new RegExp(`image 1 is a PNG of ${png.length} bytes, 640 × 480 pixels`));
  assert.match(text, /image 2 is a GIF of 14 bytes, 32 × 16 pixels/);
  assert.match(text, /image 3 is a JPEG of 41 bytes, 1920 × 1080 pixels/);
});

Deno.test("usage counts the prompt, images and tools consistently", async () => {
  const short = await simulateChat(request(), call(), OPTIONS);
  const long = await simulateChat(
    request({
      messages: [{ role: "user", content: "Tell me about the harbour at dusk, please." }],
    }),
    call(),
    OPTIONS,
  );
  assert.equal(long.usage.prompt_tokens, short.usage.prompt_tokens + 2);
  const withTools = await simulateChat(request({ tools: [WEATHER_TOOL] }), call(), OPTIONS);
  assert.ok(withTools.usage.prompt_tokens > short.usage.prompt_tokens);
  const withImage = await simulateChat(
    request({
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "Tell me about the harbour at dusk." },
          { type: "image_url", image_url: { url: dataUrl("image/png", pngBytes(2, 2)) } },
        ],
      }],
    }),
    call(),
    OPTIONS,
  );
  assert.equal(withImage.usage.prompt_tokens, short.usage.prompt_tokens + 85);
});

Deno.test("response_format json_schema makes the reply a JSON value of that schema", async () => {
  const schema = {
    type: "object",
    properties: { title: { type: "string" }, rating: { type: "integer", minimum: 1 } },
    required: ["title", "rating"],
  };
  const result: ChatCompletion = await simulateChat(
    request({ response_format: { type: "json_schema", json_schema: { name: "review", schema } } }),
    call(),
    OPTIONS,
  );
  const value = JSON.parse(result.choices[0]!.message.content!);
  assert.deepEqual(schemaErrors(schema, value), []);
  const object = await simulateChat(
    request({ response_format: { type: "json_object" } }),
    call(),
    OPTIONS,
  );
  assert.equal(typeof JSON.parse(object.choices[0]!.message.content!).reply, "string");
});

/** Checks that a call is answered a 400 `invalid_value` naming `param`, whole and streamed. */
async function rejectsSchema(req: ChatRequest, param: string): Promise<void> {
  const start = performance.now();
  const check = (e: unknown) =>
    e instanceof ApiError && e.status === 400 && e.code === "invalid_value" && e.param === param;
  await assert.rejects(simulateChat(req, call(), OPTIONS), check);
  await assert.rejects(collect(req), check);
  assert.ok(performance.now() - start < 1000);
}

Deno.test("a response_format schema over the sampler's budget is a 400 naming it", async () => {
  const schema = { type: "array", minItems: 1_000_000_000, items: { type: "string" } };
  await rejectsSchema(
    request({ response_format: { type: "json_schema", json_schema: { name: "x", schema } } }),
    "response_format.json_schema.schema.minItems",
  );
  const deep = { type: "array", minItems: 50, items: { $ref: "#" } };
  await rejectsSchema(
    request({ response_format: { type: "json_schema", json_schema: { name: "x", schema: deep } } }),
    "response_format.json_schema.schema",
  );
});

Deno.test("recursive tool parameters give bounded arguments; oversized ones a 400", async () => {
  const tree = (width: number) => ({
    type: "function",
    function: {
      name: "grow",
      parameters: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: width }, (_, i) => [`p${i}`, { $ref: "#" }]),
        ),
      },
    },
  });
  const choice = { type: "function", function: { name: "grow" } };
  for (const width of [3, 5, 40]) {
    const start = performance.now();
    const result = await simulateChat(
      request({ tools: [tree(width)], tool_choice: choice }),
      call(),
      OPTIONS,
    );
    assert.ok(performance.now() - start < 1000);
    assert.equal(result.choices[0]!.message.tool_calls![0]!.function.arguments, "{}");
  }
  const big = {
    type: "function",
    function: {
      name: "grow",
      parameters: {
        type: "object",
        properties: { a: { type: "string", minLength: 1e9 } },
        required: ["a"],
      },
    },
  };
  await rejectsSchema(
    request({ tools: [TIME_TOOL, big], tool_choice: choice }),
    "tools[1].function.parameters.properties.a.minLength",
  );
});

Deno.test("the per-token delay stops as soon as the signal aborts", async () => {
  const slow: SimulatorOptions = {
    tokenDelayMs: 60_000,
    clock: new FakeClock(),
    images: inlineImageWork,
  };
  const controller = new AbortController();
  const iterator = simulateChatStream(request(), call(controller.signal), slow)[
    Symbol.asyncIterator
  ]();
  const first = await iterator.next();
  assert.deepEqual(first.value?.choices[0]?.delta, { role: "assistant", content: "" });
  const second = iterator.next();
  controller.abort(new DOMException("gone", "AbortError"));
  await assert.rejects(
    second,
    (e: unknown) => e instanceof DOMException && e.name === "AbortError",
  );
  assert.equal((await iterator.next()).done, true);

  const whole = new AbortController();
  const pending = simulateChat(request(), call(whole.signal), slow);
  whole.abort(new DOMException("gone", "AbortError"));
  await assert.rejects(pending, (e: unknown) => e instanceof DOMException);
});
