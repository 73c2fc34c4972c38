/**
 * One conversation suite, run through a real gateway port with the official `openai` client
 * against three models: the simulator, a model behind the fake OpenAI-style upstream and one
 * behind the fake Anthropic upstream (whose streams arrive in 5-byte slices that split lines,
 * events and UTF-8 characters). Each case checks the stream contract and that the stream adds
 * up to the non-streamed answer; then the three models' answers must have the same shape in the
 * spec's fields.
 */
import assert from "node:assert/strict";
import type OpenAI from "npm:openai@7.55.0";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "npm:openai@7.55.0/resources/chat/completions";
import { openaiClient } from "./support/client.ts";
import { type Gateway, startGateway } from "./support/gateway.ts";
import { dataUrl, pngBytes } from "./support/images.ts";
import { assemble, assertStreamContract } from "./support/provider_call.ts";

const MODELS = ["sim-vision", "oa-chat", "an-chat"] as const;

const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
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

type Params = Omit<ChatCompletionCreateParamsNonStreaming, "model">;

/**
 * The fields of completions and chunks that the spec defines (with OpenAI's `refusal` and
 * `logprobs`, which the gateway always writes): the ones compared between models. Fields an
 * OpenAI-style upstream adds and the gateway passes back on purpose (`system_fingerprint`,
 * `service_tier`, `annotations`, usage details) are not.
 */
const SPEC_FIELDS: ReadonlySet<string> = new Set([
  "id",
  "object",
  "created",
  "model",
  "choices",
  "index",
  "message",
  "delta",
  "role",
  "content",
  "refusal",
  "logprobs",
  "tool_calls",
  "type",
  "function",
  "name",
  "arguments",
  "finish_reason",
  "usage",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
]);

/** Replaces values by their kind, keeping the ones a client branches on; only the spec's
 * fields are kept. */
function shape(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => shape(v));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.keys(value).filter((k) => SPEC_FIELDS.has(k)).sort()
        .map((k) => [k, shape((value as Record<string, unknown>)[k], k)]),
    );
  }
  if (typeof value === "string") {
    return ["object", "role", "finish_reason", "type"].includes(key) ? value : "string";
  }
  return typeof value === "number" ? "number" : value;
}

/** The shapes of a stream: every distinct chunk shape, in first-seen order. */
function streamShape(chunks: ChatCompletionChunk[]): string[] {
  return [...new Set(chunks.map((c) => JSON.stringify(shape(c))))];
}

interface Outcome {
  completion: ChatCompletion;
  chunks: ChatCompletionChunk[];
}

/** The case run non-streamed and streamed; checks the stream contract and that they agree. */
async function run(client: OpenAI, model: string, params: Params): Promise<Outcome> {
  const completion = await client.chat.completions.create({ ...params, model });
  assert.equal(completion.model, model);
  assert.equal(completion.object, "chat.completion");
  const usage = completion.usage!;
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

  const stream = await client.chat.completions.create({ ...params, model, stream: true });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assertStreamContract(chunks, model, { usageChunk: false });
  const streamed = assemble(chunks);
  const message = completion.choices[0]!.message;
  assert.equal(streamed.content, message.content ?? "", `${model}: streamed content`);
  assert.equal(streamed.finish, completion.choices[0]!.finish_reason, `${model}: finish`);
  assert.deepEqual(
    streamed.calls.map((c) => [c.name, JSON.parse(c.arguments)]),
    (message.tool_calls ?? []).map((c) => [
      c.type === "function" ? c.function.name : "",
      c.type === "function" ? JSON.parse(c.function.arguments) : null,
    ]),
    `${model}: streamed tool calls`,
  );
  return { completion, chunks };
}

/** Runs a case on every model and checks the answers have the same shape. */
async function everyModel(
  gateway: Gateway,
  params: Params | ((model: string) => Promise<Params>),
  check: (outcome: Outcome, model: string) => void,
): Promise<void> {
  const client = openaiClient(gateway.server);
  const outcomes: Outcome[] = [];
  for (const model of MODELS) {
    const p = typeof params === "function" ? await params(model) : params;
    const outcome = await run(client, model, p);
    check(outcome, model);
    outcomes.push(outcome);
  }
  const [sim, ...others] = outcomes;
  others.forEach((o, i) => {
    const model = MODELS[i + 1];
    assert.deepEqual(shape(o.completion), shape(sim!.completion), `${model}: completion shape`);
    assert.deepEqual(streamShape(o.chunks), streamShape(sim!.chunks), `${model}: chunk shapes`);
  });
  assert.deepEqual(gateway.openai.violations, []);
  assert.deepEqual(gateway.anthropic.violations, []);
}

function message(outcome: Outcome) {
  return outcome.completion.choices[0]!.message;
}

Deno.test("conversation: a plain exchange", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  await everyModel(gateway, {
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello there" }],
  }, (o) => {
    assert.equal(o.completion.choices[0]!.finish_reason, "stop");
    assert.match(message(o).content!, /Hello there/);
  });
  assert.equal((gateway.openai.last.body as { model: string }).model, "gpt-up");
  assert.equal((gateway.anthropic.last.body as { model: string }).model, "claude-up");
});

Deno.test("conversation: tools with two parallel calls", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  await everyModel(gateway, {
    messages: [{ role: "user", content: "Call get_weather and get_time please" }],
    tools: [WEATHER, TIME],
    tool_choice: "auto",
  }, (o, model) => {
    assert.equal(o.completion.choices[0]!.finish_reason, "tool_calls", model);
    const calls = message(o).tool_calls!;
    assert.equal(message(o).content, null);
    assert.deepEqual(
      calls.map((c) => c.type === "function" ? c.function.name : ""),
      ["get_weather", "get_time"],
    );
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    const indexes = o.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t) =>
      t.index
    );
    assert.deepEqual([...new Set(indexes)], [0, 1]);
  });
});

Deno.test("conversation: a tool round trip", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  const client = openaiClient(gateway.server);
  const ask: ChatCompletionMessageParam = {
    role: "user",
    content: "Call get_weather and get_time please",
  };
  await everyModel(gateway, async (model) => {
    const first = await client.chat.completions.create({
      model,
      messages: [ask],
      tools: [WEATHER, TIME],
    });
    const calls = first.choices[0]!.message.tool_calls!;
    return {
      tools: [WEATHER, TIME],
      messages: [
        ask,
        first.choices[0]!.message,
        { role: "tool", tool_call_id: calls[0]!.id, content: "18C and sunny" },
        { role: "tool", tool_call_id: calls[1]!.id, content: "14:05" },
      ],
    };
  }, (o, model) => {
    assert.equal(o.completion.choices[0]!.finish_reason, "stop", model);
    assert.match(message(o).content!, /18C and sunny/);
    assert.match(message(o).content!, /14:05/);
  });
});

Deno.test("conversation: image input", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  await everyModel(gateway, {
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: dataUrl("image/png", pngBytes(2, 3)) } },
      ],
    }],
  }, (o) => {
    assert.match(message(o).content!, /image/i);
    assert.equal(o.completion.choices[0]!.finish_reason, "stop");
  });
  const blocks = (gateway.anthropic.last.body as { messages: { content: { type: string }[] }[] })
    .messages[0]!.content;
  assert.deepEqual(blocks.map((b) => b.type), ["text", "image"]);
});

Deno.test("conversation: a stop sequence", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  await everyModel(gateway, {
    messages: [{ role: "user", content: "Hello there" }],
    stop: ["said"],
  }, (o) => {
    assert.equal(o.completion.choices[0]!.finish_reason, "stop");
    assert.doesNotMatch(message(o).content!, /said|Hello there/);
  });
  assert.deepEqual((gateway.anthropic.last.body as { stop_sequences: string[] }).stop_sequences, [
    "said",
  ]);
});

Deno.test("conversation: max_tokens ends with length", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  await everyModel(gateway, {
    messages: [{ role: "user", content: "Hello there, tell me a long story" }],
    max_tokens: 3,
  }, (o) => {
    assert.equal(o.completion.choices[0]!.finish_reason, "length");
    assert.ok(o.completion.usage!.completion_tokens <= 3);
  });
});

Deno.test("conversation: include_usage adds the usage chunk, and only then", async () => {
  await using gateway = await startGateway({ sliceBytes: 5 });
  const client = openaiClient(gateway.server);
  const shapes = [];
  for (const model of MODELS) {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Hello there" }];
    const stream = await client.chat.completions.create({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assertStreamContract(chunks, model);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null), `${model}: usage null before`);
    const usage = chunks.at(-1)!.usage!;
    const plain = await client.chat.completions.create({ model, messages });
    assert.deepEqual(usage, plain.usage, `${model}: the same usage as without streaming`);
    shapes.push(streamShape(chunks));
  }
  assert.deepEqual(shapes[1], shapes[0]);
  assert.deepEqual(shapes[2], shapes[0]);
});

Deno.test("conversation: unicode split across stream chunks arrives whole", async () => {
  await using gateway = await startGateway({ sliceBytes: 3 });
  const text = "Grüße 🌍 世界 ✓ «fin» — ŝŭƥéř";
  await everyModel(gateway, { messages: [{ role: "user", content: text }] }, (o) => {
    assert.ok(message(o).content!.includes(text));
    assert.ok(!message(o).content!.includes("\uFFFD"));
  });
});
