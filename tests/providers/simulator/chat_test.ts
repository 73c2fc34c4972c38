import assert from "node:assert/strict";
import type {
  CanonicalRequest,
  Message,
  Options,
  Part,
  ToolSpec,
} from "../../../src/canonical/conversation.ts";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import { ApiError } from "../../../src/errors.ts";
import { inlineImageWork } from "../../../src/images/work.ts";
import { simulateChat, simulateChatStream } from "../../../src/providers/simulator/chat.ts";
import type { SimulatorOptions } from "../../../src/providers/simulator/options.ts";
import { gifBytes, jpegBytes, pngBytes } from "../../support/images.ts";
import { schemaErrors } from "../../support/json_schema.ts";
import {
  assembleEvents,
  callContext,
  chatRequest,
  collect,
  modelRecord,
} from "../../support/provider_call.ts";

const OPTIONS: SimulatorOptions = { tokenDelayMs: 0, images: inlineImageWork };
const VISION = modelRecord({ id: "sim-vision", provider: "sim", upstream_model: "sim-vision" });
const REASONING = modelRecord({
  id: "sim-reasoning",
  provider: "sim",
  upstream_model: "sim-reasoning",
});

const call = (model = VISION) => callContext(model);

function user(text: string): Message {
  return { role: "user", parts: [{ type: "text", text }] };
}

function request(
  patch: Partial<CanonicalRequest> = {},
  options: Partial<Options> = {},
): CanonicalRequest {
  return chatRequest({ messages: [user("Tell me about the harbour at dusk.")], ...patch }, options);
}

const chat = (req: CanonicalRequest, model = VISION) => simulateChat(req, call(model), OPTIONS);

async function stream(req: CanonicalRequest, model = VISION): Promise<CanonicalEvent[][]> {
  const batches: CanonicalEvent[][] = [];
  for await (const batch of simulateChatStream(req, call(model), OPTIONS)) batches.push(batch);
  return batches;
}

/** The result a stream adds up to, its contract checked (and each batch non-empty). */
async function streamed(req: CanonicalRequest, model = VISION) {
  return assembleEvents(await collect(simulateChatStream(req, call(model), OPTIONS)));
}

/** Checks that the stream adds up to the whole answer. */
async function sameStreamed(req: CanonicalRequest, whole: CanonicalResult, model = VISION) {
  const got = await streamed(req, model);
  assert.deepEqual(got.parts, whole.parts);
  assert.equal(got.finish, whole.finish);
  assert.deepEqual(got.usage, whole.usage);
}

/** `part`, checked to be of `type`. */
function partOf<T extends Part["type"]>(
  part: Part | undefined,
  type: T,
): Extract<Part, { type: T }> {
  assert.equal(part?.type, type, JSON.stringify(part));
  return part as Extract<Part, { type: T }>;
}

/** The text of a result that is one text part. */
function text(result: CanonicalResult): string {
  assert.equal(result.parts.length, 1, JSON.stringify(result.parts));
  return partOf(result.parts[0], "text").text;
}

const WEATHER_TOOL: ToolSpec = {
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
};
const TIME_TOOL: ToolSpec = {
  name: "get_time",
  parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
};

Deno.test("the simulator answers from the conversation, the same way every time", async () => {
  const a = await chat(request());
  assert.deepEqual(await chat(request()), a);
  const other = await chat(request({ messages: [user("Something else entirely.")] }));
  assert.notEqual(text(other), text(a));
  assert.match(text(a), /Tell me about the harbour at dusk\./);
  assert.match(text(a), /I am sim-vision, a model simulated by Switchyard\./);
  assert.match(text(a), /This conversation has 1 message\.$/);
  assert.equal(a.finish, "stop");
  assert.equal(a.id, undefined);
  assert.ok(a.usage.input > 0 && a.usage.output > 0);
  assert.equal(a.usage.reasoning, undefined);
});

Deno.test("the stream: start at once, then one batch per token, usage and finish last", async () => {
  const whole = await chat(request());
  const batches = await stream(request());
  assert.deepEqual(batches[0], [{ type: "start" }]);
  assert.deepEqual(batches[1]!.slice(0, 1), [
    { type: "block_start", index: 0, block: { type: "text" } },
  ]);
  const deltas = batches.map((b) => b.filter((e) => e.type === "block_delta").length);
  assert.ok(deltas.slice(1, -1).every((n) => n === 1), JSON.stringify(deltas));
  assert.equal(deltas.slice(1, -1).length, whole.usage.output);
  assert.deepEqual(batches.at(-2)!.at(-1), { type: "block_stop", index: 0 });
  assert.deepEqual(batches.at(-1), [
    { type: "usage", usage: whole.usage },
    { type: "finish", reason: "stop" },
  ]);
  await sameStreamed(request(), whole);
});

Deno.test("maxTokens stops early with finish length", async () => {
  const full = text(await chat(request()));
  const cut = await chat(request({}, { maxTokens: 3 }));
  assert.equal(cut.finish, "length");
  assert.equal(cut.usage.output, 3);
  assert.ok(full.startsWith(text(cut)) && text(cut).length < full.length);
  await sameStreamed(request({}, { maxTokens: 3 }), cut);
});

Deno.test("stop cuts the reply before the first stop sequence", async () => {
  const full = text(await chat(request()));
  const req = request({}, { stop: ["harbour", "simulated"] });
  const stopped = await chat(req);
  assert.equal(stopped.finish, "stop");
  assert.equal(text(stopped), full.slice(0, full.indexOf("simulated")));
  await sameStreamed(req, stopped);
  assert.equal(text(await chat(request({}, { stop: ["zebra"] }))), full);
  const empty = await chat(request({}, { stop: [full.slice(0, 5)] }));
  assert.deepEqual(empty.parts, [{ type: "text", text: "" }]);
  await sameStreamed(request({}, { stop: [full.slice(0, 5)] }), empty);
});

Deno.test("tools named in the last user message are called with schema-valid arguments", async () => {
  const req = request({
    messages: [user("Use get_time (zone=UTC) and get_weather for city=Oslo.")],
  }, { tools: [WEATHER_TOOL, TIME_TOOL] });
  const result = await chat(req);
  assert.equal(result.finish, "tool_calls");
  const calls = result.parts.map((p) => partOf(p, "tool_call"));
  assert.deepEqual(calls.map((c) => c.name), ["get_time", "get_weather"]);
  assert.deepEqual(JSON.parse(calls[0]!.arguments), { zone: "UTC" });
  const weather = JSON.parse(calls[1]!.arguments);
  assert.deepEqual(schemaErrors(WEATHER_TOOL.parameters!, weather), []);
  assert.equal(weather.city, "Oslo");
  assert.notEqual(calls[0]!.id, calls[1]!.id);
  assert.match(calls[0]!.id, /^call_[0-9A-Za-z]{24}$/);
  assert.equal(result.usage.output, 2 + calls.reduce((n, c) => n + tokens(c.arguments), 0));
  await sameStreamed(req, result);

  // Each call is a tool_call block: its start a batch of its own, then argument pieces.
  const batches = await stream(req);
  assert.deepEqual(batches[1], [{
    type: "block_start",
    index: 0,
    block: { type: "tool_call", id: calls[0]!.id, name: "get_time" },
  }]);
  const second = batches.find((b) => b.some((e) => e.type === "block_start" && e.index === 1))!;
  assert.deepEqual(second, [{
    type: "block_start",
    index: 1,
    block: { type: "tool_call", id: calls[1]!.id, name: "get_weather" },
  }]);
  const pieces = batches.flat().filter((e) => e.type === "block_delta" && e.index === 1);
  assert.ok(pieces.length > 1);
  for (const e of pieces) assert.equal(e.type === "block_delta" && e.delta.type, "arguments");

  const single = await chat(request({ messages: req.messages }, {
    tools: [WEATHER_TOOL, TIME_TOOL],
    parallelToolCalls: false,
  }));
  assert.equal(single.parts.length, 1);
});

/** Tokens of a text, as the simulator counts them (words, other characters). */
function tokens(text: string): number {
  return text.match(/\s*(?:[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_])|\s+/gu)?.length ?? 0;
}

Deno.test("toolChoice decides whether and which tool is called", async () => {
  const tools = [WEATHER_TOOL, TIME_TOOL];
  const names = (r: CanonicalResult) => r.parts.map((p) => p.type === "tool_call" ? p.name : "");
  assert.equal((await chat(request({}, { tools }))).finish, "stop");
  const required = await chat(request({}, { tools, toolChoice: "required" }));
  assert.deepEqual(names(required), ["get_weather"]);
  const named = await chat(request({}, { tools, toolChoice: { name: "get_time" } }));
  assert.deepEqual(names(named), ["get_time"]);
  const none = await chat(request({ messages: [user("call get_time")] }, {
    tools,
    toolChoice: "none",
  }));
  assert.equal(none.finish, "stop");
  assert.equal(none.parts[0]!.type, "text");
});

Deno.test("after tool results the simulator answers with them, wherever they are", async () => {
  const question = user("What is the weather? Use get_weather.");
  const asked: Message = {
    role: "assistant",
    parts: [{
      type: "tool_call",
      id: "call_a",
      name: "get_weather",
      arguments: '{"city":"Oslo","days":1}',
    }],
  };
  const result = {
    type: "tool_result" as const,
    callId: "call_a",
    content: [{ type: "text" as const, text: '{"temp":-3,"sky":"snow"}' }],
    isError: false,
  };
  const conversations: Message[][] = [
    [question, asked, { role: "tool", parts: [result] }], // OpenAI's tool message
    [question, asked, { role: "user", parts: [result] }], // Anthropic's tool_result block
  ];
  for (const messages of conversations) {
    const answer = await chat(request({ messages }, { tools: [WEATHER_TOOL] }));
    assert.equal(answer.finish, "stop");
    assert.match(text(answer), /The get_weather tool returned \{"temp":-3,"sky":"snow"\}\./);
    assert.match(
      text(answer),
      /That answers your request: "What is the weather\? Use get_weather\."/,
    );
    const forced = await chat(request({ messages }, {
      tools: [WEATHER_TOOL],
      toolChoice: "required",
    }));
    assert.equal(forced.finish, "tool_calls");
  }
});

Deno.test("images: inline ones described from their headers, URLs not fetched", async () => {
  const png = pngBytes(640, 480);
  const data = (mediaType: string, bytes: Uint8Array) => ({
    type: "image" as const,
    source: { kind: "data" as const, mediaType, base64: bytes.toBase64() },
  });
  const req = request({
    messages: [{
      role: "user",
      parts: [
        { type: "text", text: "What are these?" },
        data("image/png", png),
        data("image/gif", gifBytes(32, 16)),
        data("image/jpeg", jpegBytes(1920, 1080)),
        { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
      ],
    }],
  });
  const reply = text(await chat(req));
  assert.match(reply, /You sent 4 images/);
  assert.match(reply, new RegExp(`image 1 is a PNG of ${png.length} bytes, 640 × 480 pixels`));
  assert.match(reply, /image 2 is a GIF of 14 bytes, 32 × 16 pixels/);
  assert.match(reply, /image 3 is a JPEG of 41 bytes, 1920 × 1080 pixels/);
  assert.match(
    reply,
    /image 4 is at the URL https:\/\/example\.com\/cat\.png, which the simulator does not fetch/,
  );
});

Deno.test("documents make the conversation's key: a PDF by its size, a text by its title and length, a URL by itself", async () => {
  const ask = (document: Part) =>
    request({
      messages: [{
        role: "user",
        parts: [{ type: "text", text: "Use get_time (zone=UTC)." }, document],
      }],
    }, { tools: [TIME_TOOL] });
  const callId = async (document: Part) =>
    partOf((await chat(ask(document))).parts[0]!, "tool_call").id;
  const pdf = (base64: string): Part => ({
    type: "document",
    source: { kind: "data", mediaType: "application/pdf", base64 },
  });
  const text = (body: string, title?: string): Part => ({
    type: "document",
    source: { kind: "text", text: body },
    ...(title === undefined ? {} : { title }),
  });
  const url = (address: string): Part => ({
    type: "document",
    source: { kind: "url", url: address },
  });
  const ids = await Promise.all([
    callId(pdf("JVBERi0x")),
    callId(pdf("JVBERi0xLjQK")),
    callId(text("abc")),
    callId(text("abcd")),
    callId(text("abc", "notes")),
    callId(url("https://example.com/a.pdf")),
    callId(url("https://example.com/b.pdf")),
  ]);
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(await callId(pdf("JVBERi0y")), ids[0], "the same size, the same key");
});

Deno.test("usage counts the prompt, images and tools consistently", async () => {
  const short = await chat(request());
  const long = await chat(request({
    messages: [user("Tell me about the harbour at dusk, please.")],
  }));
  assert.equal(long.usage.input, short.usage.input + 2);
  const withTools = await chat(request({}, { tools: [WEATHER_TOOL] }));
  assert.ok(withTools.usage.input > short.usage.input);
  const withImage = await chat(request({
    messages: [{
      role: "user",
      parts: [
        { type: "text", text: "Tell me about the harbour at dusk." },
        {
          type: "image",
          source: { kind: "data", mediaType: "image/png", base64: pngBytes(2, 2).toBase64() },
        },
      ],
    }],
  }));
  assert.equal(withImage.usage.input, short.usage.input + 85);
});

Deno.test("output json: the reply as a JSON object", async () => {
  const result = await chat(request({}, { output: { type: "json" } }));
  const value = JSON.parse(text(result));
  assert.deepEqual(Object.keys(value), ["reply"]);
  assert.match(value.reply, /Tell me about the harbour at dusk/);
  await sameStreamed(request({}, { output: { type: "json" } }), result);
});

Deno.test("output json_schema: a value of the schema, hints used where they fit", async () => {
  const schema = {
    type: "object",
    properties: {
      title: { type: "string" },
      rating: { type: "integer", minimum: 1, maximum: 5 },
      mood: { type: "string", enum: ["calm", "stormy"] },
    },
    required: ["title", "rating", "mood"],
    additionalProperties: false,
  };
  const req = request({ messages: [user("Review it: title=Harbour, mood=stormy")] }, {
    output: { type: "json_schema", name: "review", schema, strict: true },
  });
  const result = await chat(req);
  const value = JSON.parse(text(result));
  assert.deepEqual(schemaErrors(schema, value), []);
  assert.deepEqual(value, { title: "Harbour", rating: 1, mood: "stormy" });
  assert.equal(result.finish, "stop");
  await sameStreamed(req, result);
});

/** Checks that a call is answered a 400 `invalid_value` naming `param`, whole and streamed. */
async function rejectsSchema(req: CanonicalRequest, param: string): Promise<void> {
  const start = performance.now();
  const check = (e: unknown) =>
    e instanceof ApiError && e.status === 400 && e.code === "invalid_value" && e.param === param;
  await assert.rejects(chat(req), check);
  await assert.rejects(stream(req), check);
  assert.ok(performance.now() - start < 1000);
}

Deno.test("a schema over the sampler's budget is a 400 naming the caller's field", async () => {
  const schema = { type: "array", minItems: 1_000_000_000, items: { type: "string" } };
  const output = { type: "json_schema" as const, name: "x", schema, strict: false };
  const fields = {
    openai_chat: "response_format.json_schema.schema",
    openai_responses: "text.format.schema",
    anthropic_messages: "output_config.format.schema",
  } as const;
  for (const [protocol, field] of Object.entries(fields)) {
    const extras = { protocol: protocol as keyof typeof fields, fields: {} };
    await rejectsSchema(request({ extras }, { output }), `${field}.minItems`);
  }
  const deep = { type: "array", minItems: 50, items: { $ref: "#" } };
  await rejectsSchema(
    request({}, { output: { type: "json_schema", name: "x", schema: deep, strict: false } }),
    "response_format.json_schema.schema",
  );
  const big: ToolSpec = {
    name: "grow",
    parameters: {
      type: "object",
      properties: { a: { type: "string", minLength: 1e9 } },
      required: ["a"],
    },
  };
  const forced = { tools: [TIME_TOOL, big], toolChoice: { name: "grow" } };
  await rejectsSchema(request({}, forced), "tools[1].function.parameters.properties.a.minLength");
  await rejectsSchema(
    request({ extras: { protocol: "anthropic_messages", fields: {} } }, forced),
    "tools[1].input_schema.properties.a.minLength",
  );
  await rejectsSchema(
    request({ extras: { protocol: "openai_responses", fields: {} } }, forced),
    "tools[1].parameters.properties.a.minLength",
  );
});

Deno.test("recursive tool parameters give bounded arguments", async () => {
  for (const width of [3, 5, 40]) {
    const tool: ToolSpec = {
      name: "grow",
      parameters: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: width }, (_, i) => [`p${i}`, { $ref: "#" }]),
        ),
      },
    };
    const start = performance.now();
    const result = await chat(request({}, { tools: [tool], toolChoice: { name: "grow" } }));
    assert.ok(performance.now() - start < 1000);
    assert.equal(partOf(result.parts[0], "tool_call").arguments, "{}");
  }
});

Deno.test("sim-reasoning thinks first: a reasoning block, counted in usage", async () => {
  const result = await chat(request(), REASONING);
  assert.equal(result.parts.length, 2);
  const thought = partOf(result.parts[0], "reasoning");
  assert.equal(thought.style, "simulator");
  assert.equal(thought.signature, undefined);
  assert.equal(thought.redacted, undefined);
  assert.match(thought.text, /^The user wrote: "Tell me about the harbour at dusk\."/);
  assert.match(thought.text, /I will answer in plain text\.$/);
  assert.match(partOf(result.parts[1], "text").text, /I am sim-reasoning/);
  const plain = await chat(
    request({ model: "sim-reasoning" }),
    modelRecord({
      id: "sim-reasoning",
      provider: "sim",
      upstream_model: "sim-chat",
    }),
  );
  const reasoning = tokens(thought.text);
  assert.equal(result.usage.reasoning, reasoning);
  assert.equal(result.usage.output, reasoning + plain.usage.output);
  assert.equal(result.finish, "stop");

  await sameStreamed(request(), result, REASONING);
  const batches = await stream(request(), REASONING);
  assert.deepEqual(batches[1]!.slice(0, 2), [
    { type: "block_start", index: 0, block: { type: "reasoning", style: "simulator" } },
    { type: "block_delta", index: 0, delta: { type: "reasoning", text: "The" } },
  ]);
  const switchover = batches.find((b) => b.some((e) => e.type === "block_start" && e.index === 1));
  assert.deepEqual(switchover![0], { type: "block_start", index: 1, block: { type: "text" } });
  assert.ok(batches.flat().every((e) => e.type !== "block_delta" || e.delta.type !== "signature"));
});

Deno.test("reasoning options: asked for on any model, off when disabled", async () => {
  const asked = await chat(request({}, { reasoning: { effort: "low" } }));
  assert.deepEqual(asked.parts.map((p) => p.type), ["reasoning", "text"]);
  assert.ok(asked.usage.reasoning! > 0);
  const off = await chat(request({}, { reasoning: { disabled: true } }), REASONING);
  assert.deepEqual(off.parts.map((p) => p.type), ["text"]);
  assert.equal(off.usage.reasoning, undefined);
});

Deno.test("reasoning plans tool calls and JSON answers", async () => {
  const tools = await chat(
    request({ messages: [user("Use get_time and get_weather.")] }, {
      tools: [WEATHER_TOOL, TIME_TOOL],
    }),
    REASONING,
  );
  assert.deepEqual(tools.parts.map((p) => p.type), ["reasoning", "tool_call", "tool_call"]);
  assert.match(
    partOf(tools.parts[0], "reasoning").text,
    /I should call get_time and get_weather and answer once I have the results\.$/,
  );
  assert.equal(tools.finish, "tool_calls");
  await sameStreamed(
    request({ messages: [user("Use get_time and get_weather.")] }, {
      tools: [WEATHER_TOOL, TIME_TOOL],
    }),
    tools,
    REASONING,
  );

  const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  const json = await chat(
    request({}, { output: { type: "json_schema", name: "count", schema, strict: true } }),
    REASONING,
  );
  const plan = partOf(json.parts[0], "reasoning").text;
  assert.match(plan, /JSON that matches the schema "count"/);
  assert.deepEqual(JSON.parse(partOf(json.parts[1], "text").text), { n: 1 });
});

Deno.test("maxTokens counts reasoning: a cut in the reasoning ends the answer there", async () => {
  const cut = await chat(request({}, { maxTokens: 4 }), REASONING);
  assert.deepEqual(cut.parts, [{ type: "reasoning", text: "The user wrote:", style: "simulator" }]);
  assert.equal(cut.finish, "length");
  assert.deepEqual(cut.usage, { input: cut.usage.input, output: 4, reasoning: 4 });
  await sameStreamed(request({}, { maxTokens: 4 }), cut, REASONING);
});

Deno.test("a cut tool call keeps its start; calls past the limit are left out", async () => {
  const req = request({ messages: [user("Use get_time and get_weather.")] }, {
    tools: [WEATHER_TOOL, TIME_TOOL],
    maxTokens: 1,
  });
  const result = await chat(req);
  assert.equal(result.finish, "length");
  assert.deepEqual(result.parts.map((p) => p.type === "tool_call" && [p.name, p.arguments]), [
    ["get_time", ""],
  ]);
  await sameStreamed(req, result);
});

Deno.test("the per-token delay stops as soon as the signal aborts", async () => {
  const slow: SimulatorOptions = { tokenDelayMs: 60_000, images: inlineImageWork };
  const ctx = callContext(VISION);
  const iterator = simulateChatStream(request(), ctx, slow)[Symbol.asyncIterator]();
  assert.deepEqual((await iterator.next()).value, [{ type: "start" }]);
  const second = iterator.next();
  ctx.abort.abort(new DOMException("gone", "AbortError"));
  await assert.rejects(
    second,
    (e: unknown) => e instanceof DOMException && e.name === "AbortError",
  );
  assert.equal((await iterator.next()).done, true);

  const whole = callContext(VISION);
  const pending = simulateChat(request(), whole, slow);
  whole.abort.abort(new DOMException("gone", "AbortError"));
  await assert.rejects(pending, (e: unknown) => e instanceof DOMException);
});

Deno.test("stopping early (return) ends the stream with no timer left behind", async () => {
  const slow: SimulatorOptions = { tokenDelayMs: 5, images: inlineImageWork };
  const iterator = simulateChatStream(request(), callContext(VISION), slow)[
    Symbol.asyncIterator
  ]();
  await iterator.next();
  await iterator.next();
  assert.deepEqual(await iterator.return!(), { done: true, value: undefined });
  assert.equal((await iterator.next()).done, true);
});

Deno.test("simulator: with a prefill it goes on from it: the rest of its reply, whatever was cut", async () => {
  const ask = chatRequest();
  const whole = (await simulateChat(ask, callContext(), OPTIONS)).parts[0];
  assert.equal(whole?.type, "text");
  const full = (whole as { text: string }).text;
  for (const cut of [1, 12, full.length - 1]) {
    const prefix = full.slice(0, cut);
    const prefilled = chatRequest({
      messages: [...ask.messages, { role: "assistant", parts: [{ type: "text", text: prefix }] }],
    });
    const rest = await simulateChat(prefilled, callContext(), OPTIONS);
    assert.equal(prefix + (rest.parts[0] as { text: string }).text, full, `cut at ${cut}`);
    // The prefill is input, as for any upstream.
    assert.ok(rest.usage.input > (await simulateChat(ask, callContext(), OPTIONS)).usage.input);
  }
});
