/**
 * Thinking survives a tool loop through the gateway: a model behind an Anthropic upstream
 * thinks, then calls a tool; the client sends back exactly the assistant message the gateway
 * gave it (content, `reasoning_content`, `thinking_blocks` with their signatures, `tool_calls`)
 * plus the tool's result; the upstream must get its thinking block back byte for byte, first
 * in the assistant turn, or it rejects the request (Anthropic checks the signature, and with
 * thinking on, a tool-use turn must start with thinking).
 *
 * The client is raw fetch and the official `openai` client, each with the first turn streamed
 * and not. The upstream is the scripted Anthropic upstream of support/sdk_gateway.ts, whose
 * check accepts a thinking block only with the signature it gave for that very text.
 */
import assert from "node:assert/strict";
import { BadRequestError } from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import {
  type AnthropicAnswer,
  type AnthropicBlock,
  assembleMessage,
  chunksOf,
  type JsonBody,
  openaiClient,
  postChat,
  redactedData,
  scriptedAnthropic,
  type SdkGateway,
  signThinking,
  startSdkGateway,
  streamChat,
} from "./support/sdk_gateway.ts";

type Obj = Record<string, JsonBody>;

const THOUGHT = "The user wants the weather in Paris. I should call get_weather with city Paris.";
const PREAMBLE = "Let me check the weather.";
const CALL_ID = "toolu_01RoundTripWeather";

const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const ASK: ChatCompletionMessageParam = { role: "user", content: "What is the weather in Paris?" };

/** The upstream: thinks and calls get_weather; after the tool's result, reports it. */
function weatherUpstream(first: AnthropicBlock[]) {
  return scriptedAnthropic((body): AnthropicAnswer => {
    const last = body.messages.at(-1);
    const results = Array.isArray(last?.content)
      ? last.content.filter((b: JsonBody) => b.type === "tool_result")
      : [];
    if (results.length > 0) {
      const text = results.map((r: JsonBody) =>
        typeof r.content === "string" ? r.content : r.content.map((c: Obj) => c.text).join("")
      ).join("; ");
      return {
        content: [{ type: "text", text: `The weather in Paris: ${text}.` }],
        stop_reason: "end_turn",
      };
    }
    return { content: first, stop_reason: "tool_use" };
  });
}

const THINK_AND_CALL: AnthropicBlock[] = [
  { type: "thinking", thinking: THOUGHT },
  { type: "text", text: PREAMBLE },
  { type: "tool_use", id: CALL_ID, name: "get_weather", input: { city: "Paris" } },
];

/** What the upstream must get back as the assistant turn. */
const EXPECTED_TURN = [
  { type: "thinking", thinking: THOUGHT, signature: signThinking(THOUGHT) },
  { type: "text", text: PREAMBLE },
  { type: "tool_use", id: CALL_ID, name: "get_weather", input: { city: "Paris" } },
];

const FIRST: Obj = {
  model: "an-chat",
  reasoning_effort: "low",
  tools: [WEATHER],
  messages: [ASK],
};

/** The second request: the first plus the assistant message as given and the tool's result. */
function secondRequest(assistant: Obj, result = "18C and sunny"): Obj {
  return {
    ...FIRST,
    messages: [ASK, assistant, { role: "tool", tool_call_id: CALL_ID, content: result }],
  };
}

/** Checks the first answer's message: what a client must be able to send back. */
function assertFirstMessage(message: Obj): void {
  assert.equal(message.role, "assistant");
  assert.equal(message.content, PREAMBLE);
  assert.equal(message.reasoning_content, THOUGHT);
  assert.deepEqual(message.thinking_blocks, [
    { type: "thinking", thinking: THOUGHT, signature: signThinking(THOUGHT) },
  ]);
  assert.equal(message.tool_calls?.length, 1);
  assert.equal(message.tool_calls[0].id, CALL_ID);
  assert.equal(message.tool_calls[0].function.name, "get_weather");
  assert.deepEqual(JSON.parse(message.tool_calls[0].function.arguments), { city: "Paris" });
}

/** Checks what the upstream got on the second call, and that it had nothing to object to. */
function assertSecondCall(gateway: SdkGateway, expectedTurn: unknown[] = EXPECTED_TURN): void {
  assert.deepEqual(gateway.anthropic.violations, []);
  const sent = gateway.anthropic.last.body as Obj;
  assert.equal(sent.thinking?.type, "enabled", "thinking stays on for the tool loop");
  assert.equal(sent.messages.length, 3);
  assert.equal(sent.messages[1].role, "assistant");
  assert.deepEqual(sent.messages[1].content, expectedTurn, "the assistant turn, byte for byte");
  assert.equal(sent.messages[2].content[0].type, "tool_result");
  assert.equal(sent.messages[2].content[0].tool_use_id, CALL_ID);
}

Deno.test("thinking round trip: raw fetch, first turn not streamed", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.choices[0].finish_reason, "tool_calls");
  const message = first.body.choices[0].message;
  assertFirstMessage(message);

  const second = await postChat(gateway, secondRequest(message));
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.choices[0].message.content, "The weather in Paris: 18C and sunny.");
  assertSecondCall(gateway);
});

Deno.test("thinking round trip: raw fetch, first turn streamed", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const first = await streamChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.events));
  const message = assembleMessage(chunksOf(first.events));
  assertFirstMessage(message);

  const second = await streamChat(gateway, secondRequest(message));
  assert.equal(second.status, 200, JSON.stringify(second.events));
  assert.equal(
    assembleMessage(chunksOf(second.events)).content,
    "The weather in Paris: 18C and sunny.",
  );
  assertSecondCall(gateway);
});

Deno.test("thinking round trip: the openai client sends back the message it got", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const client = openaiClient(gateway);
  const params = FIRST as unknown as ChatCompletionCreateParamsNonStreaming;
  const first = await client.chat.completions.create(params);
  const message = first.choices[0]!.message;
  assertFirstMessage(message as unknown as Obj);

  const second = await client.chat.completions.create({
    ...params,
    messages: [
      ASK,
      message,
      { role: "tool", tool_call_id: message.tool_calls![0]!.id, content: "18C and sunny" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, "The weather in Paris: 18C and sunny.");
  assertSecondCall(gateway);
});

Deno.test("thinking round trip: the openai client, first turn streamed and assembled", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const client = openaiClient(gateway);
  const params = FIRST as unknown as ChatCompletionCreateParamsNonStreaming;
  // The SDK's own accumulator (`chat.completions.stream()`) assigns unknown delta fields, so
  // `reasoning_content` and `thinking_blocks` would keep only their last piece: a client that
  // round-trips thinking assembles the deltas itself.
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const message = assembleMessage(chunks);
  assertFirstMessage(message);

  const second = await client.chat.completions.create({
    ...params,
    messages: [
      ASK,
      message as ChatCompletionMessageParam,
      { role: "tool", tool_call_id: CALL_ID, content: "18C and sunny" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, "The weather in Paris: 18C and sunny.");
  assertSecondCall(gateway);
});

Deno.test("thinking round trip: a tampered signature gets the upstream's 400", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const message = structuredClone(first.body.choices[0].message);
  const signature: string = message.thinking_blocks[0].signature;
  message.thinking_blocks[0].signature = (signature[0] === "A" ? "B" : "A") + signature.slice(1);

  const second = await postChat(gateway, secondRequest(message));
  assert.equal(second.status, 400, JSON.stringify(second.body));
  assert.equal(second.body.error.type, "invalid_request_error");
  assert.match(second.body.error.message, /signature/);
  assert.equal(typeof second.body.error.code, "string");
  assert.ok(
    gateway.anthropic.violations.some((v) => /Invalid `signature`/.test(v)),
    "the upstream's signature check refused it",
  );

  // The same through the SDK: a BadRequestError.
  const client = openaiClient(gateway);
  await assert.rejects(
    client.chat.completions.create(
      secondRequest(message) as unknown as ChatCompletionCreateParamsNonStreaming,
    ),
    (error: unknown) => {
      assert.ok(error instanceof BadRequestError, String(error));
      assert.match(error.message, /signature/);
      return true;
    },
  );

  // Thinking text changed under a genuine signature is refused too.
  const edited = structuredClone(first.body.choices[0].message);
  edited.thinking_blocks[0].thinking += " Also, it may rain.";
  const third = await postChat(gateway, secondRequest(edited));
  assert.equal(third.status, 400, JSON.stringify(third.body));
});

Deno.test("thinking round trip: redacted thinking goes back unchanged", async () => {
  const data = redactedData("weather-plan");
  await using gateway = await startSdkGateway({
    anthropic: weatherUpstream([
      { type: "redacted_thinking", data },
      { type: "tool_use", id: CALL_ID, name: "get_weather", input: { city: "Paris" } },
    ]),
  });
  for (const stream of [false, true]) {
    const first = stream ? await streamChat(gateway, FIRST) : await postChat(gateway, FIRST);
    assert.equal(first.status, 200, JSON.stringify(first));
    const message = "events" in first
      ? assembleMessage(chunksOf(first.events))
      : first.body.choices[0].message;
    assert.deepEqual(message.thinking_blocks, [{ type: "redacted_thinking", data }]);
    const second = await postChat(gateway, secondRequest(message));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assertSecondCall(gateway, [
      { type: "redacted_thinking", data },
      { type: "tool_use", id: CALL_ID, name: "get_weather", input: { city: "Paris" } },
    ]);
  }
});

Deno.test("thinking round trip: without its thinking blocks, the tool loop still goes through", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  // A client that keeps only OpenAI's fields: the signed thinking is gone, and Anthropic
  // refuses a thinking request whose tool-use turn does not start with thinking; the gateway
  // must send that request without thinking rather than fail it.
  const { thinking_blocks: _, reasoning_content: __, ...bare } = first.body.choices[0].message;
  const second = await postChat(gateway, secondRequest(bare));
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.choices[0].message.content, "The weather in Paris: 18C and sunny.");
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("thinking round trip: Anthropic thinking in history sent to an OpenAI-style model", async () => {
  await using gateway = await startSdkGateway({ anthropic: weatherUpstream(THINK_AND_CALL) });
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const message = first.body.choices[0].message;
  // The conversation moves to a model on the OpenAI fake, which rejects message fields
  // OpenAI does not know: the gateway drops the foreign thinking on the way.
  const second = await postChat(gateway, { ...secondRequest(message), model: "oa-chat" });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.deepEqual(gateway.openai.violations, []);
  const sent = gateway.openai.last.body as Obj;
  assert.equal(sent.messages[1].role, "assistant");
  assert.equal(sent.messages[1].tool_calls[0].id, CALL_ID);
  assert.ok(!JSON.stringify(sent).includes(signThinking(THOUGHT)), "no Anthropic signature");
});

Deno.test("thinking round trip: structured output with thinking on is a request Anthropic takes", async () => {
  // Anthropic refuses a forced tool choice while thinking is on, so a JSON schema cannot be
  // forced through a tool then: the gateway must find another way (or leave thinking off).
  const answer = { city: "Paris", celsius: 18 };
  await using gateway = await startSdkGateway({
    anthropic: scriptedAnthropic((body): AnthropicAnswer => {
      const thinking: AnthropicBlock[] = body.thinking?.type === "enabled"
        ? [{ type: "thinking", thinking: "A JSON answer is wanted." }]
        : [];
      const tool = body.tools?.[0];
      return tool
        ? {
          content: [...thinking, { type: "tool_use", id: CALL_ID, name: tool.name, input: answer }],
          stop_reason: "tool_use",
        }
        : {
          content: [...thinking, { type: "text", text: JSON.stringify(answer) }],
          stop_reason: "end_turn",
        };
    }),
  });
  const res = await postChat(gateway, {
    model: "an-chat",
    reasoning_effort: "low",
    messages: [{ role: "user", content: "The weather in Paris, as JSON." }],
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "weather",
        strict: true,
        schema: {
          type: "object",
          properties: { city: { type: "string" }, celsius: { type: "number" } },
          required: ["city", "celsius"],
          additionalProperties: false,
        },
      },
    },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(gateway.anthropic.violations, []);
  assert.deepEqual(JSON.parse(res.body.choices[0].message.content), answer);
  assert.equal(res.body.choices[0].finish_reason, "stop");
});
