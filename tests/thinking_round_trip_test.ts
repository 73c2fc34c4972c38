/**
 * Thinking survives a tool loop through the gateway: a model behind the Anthropic fake thinks,
 * then calls a tool; the client sends back exactly the assistant message the gateway gave it
 * (content, `reasoning_content`, `thinking_blocks` with their signatures, `tool_calls`) plus
 * the tool's result; the fake must get its thinking block back byte for byte, first in the
 * assistant turn, or it rejects the request as Anthropic does (the signature is an HMAC of the
 * model and the text; with thinking on, a tool-use turn answered last must start with
 * thinking).
 *
 * The client is raw fetch and the official `openai` client, each with the first turn streamed
 * and not.
 */
import assert from "node:assert/strict";
import { BadRequestError } from "npm:openai@7.55.0";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "npm:openai@7.55.0/resources/chat/completions";
import {
  askDirectly,
  assembleMessage,
  chunksOf,
  type JsonBody,
  openaiClient,
  postChat,
  type SdkGateway,
  startSdkGateway,
  streamChat,
  structuredScript,
} from "./support/sdk_gateway.ts";

type Obj = Record<string, JsonBody>;

const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
/** The fake's model calls the tools a user names, with the cities named after the first word. */
const ASK: ChatCompletionMessageParam = { role: "user", content: "Call get_weather for Paris" };
const REPORT = "Tool results: 18C and sunny";

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
    messages: [
      ASK,
      assistant,
      { role: "tool", tool_call_id: assistant.tool_calls?.[0]?.id, content: result },
    ],
  };
}

/**
 * The fake's own first answer, asked again directly: its thinking block with the signature
 * (the same for the same model and text) and its tool_use — whose id the fake numbers anew
 * each time, so the id is the one the gateway passed on (checked to be the fake's kind).
 */
async function upstreamTurn(gateway: SdkGateway, message: Obj): Promise<Obj[]> {
  const answer = await askDirectly(gateway.anthropic);
  const content = Array.isArray(answer) ? assembleAnthropic(answer) : answer.content;
  assert.ok(
    ["thinking", "redacted_thinking"].includes(content[0]?.type),
    `the fake thought first: ${JSON.stringify(content)}`,
  );
  const call = content.at(-1);
  assert.equal(call.type, "tool_use");
  const id = message.tool_calls?.[0]?.id;
  assert.match(String(id), /^toolu_fake\d+$/, "the upstream's tool_use id is passed on");
  call.id = id;
  return content;
}

/** The content blocks of an Anthropic SSE stream (as the fake sent them). */
function assembleAnthropic(events: JsonBody[]): Obj[] {
  const blocks: Obj[] = [];
  for (const e of events) {
    if (e.type === "content_block_start") blocks[e.index] = structuredClone(e.content_block);
    if (e.type !== "content_block_delta") continue;
    const b = blocks[e.index]!, d = e.delta;
    if (d.type === "thinking_delta") b.thinking += d.thinking;
    if (d.type === "signature_delta") b.signature += d.signature;
    if (d.type === "text_delta") b.text += d.text;
    if (d.type === "input_json_delta") b.partial = (b.partial ?? "") + d.partial_json;
  }
  for (const b of blocks) {
    if (b.type === "tool_use") {
      b.input = JSON.parse(b.partial || "{}");
      delete b.partial;
    }
  }
  return blocks;
}

/** Checks the first answer's message against the fake's answer: what a client must be able
 * to send back. */
function assertFirstMessage(message: Obj, turn: Obj[]): void {
  const [thinking] = turn;
  const call = turn.at(-1)!;
  assert.equal(message.role, "assistant");
  if (thinking!.type === "thinking") assert.equal(message.reasoning_content, thinking!.thinking);
  assert.deepEqual(message.thinking_blocks, [thinking]);
  assert.equal(message.tool_calls?.length, 1);
  assert.equal(message.tool_calls[0].id, call.id);
  assert.equal(message.tool_calls[0].function.name, "get_weather");
  assert.deepEqual(JSON.parse(message.tool_calls[0].function.arguments), { city: "Paris" });
}

/** Checks what the fake got on the second call, and that it had nothing to object to. */
function assertSecondCall(gateway: SdkGateway, turn: Obj[]): void {
  assert.deepEqual(gateway.anthropic.violations, []);
  const sent = gateway.anthropic.last.body as Obj;
  assert.equal(sent.thinking?.type, "enabled", "thinking stays on for the tool loop");
  assert.equal(sent.messages.length, 3);
  assert.equal(sent.messages[1].role, "assistant");
  assert.deepEqual(sent.messages[1].content, turn, "the assistant turn, byte for byte");
  assert.equal(sent.messages[2].content[0].type, "tool_result");
  assert.equal(sent.messages[2].content[0].tool_use_id, turn.at(-1)!.id);
}

Deno.test("thinking round trip: raw fetch, first turn not streamed", async () => {
  await using gateway = await startSdkGateway();
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.choices[0].finish_reason, "tool_calls");
  const message = first.body.choices[0].message;
  const turn = await upstreamTurn(gateway, message);
  assertFirstMessage(message, turn);

  const second = await postChat(gateway, secondRequest(message));
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.choices[0].message.content, REPORT);
  assertSecondCall(gateway, turn);
});

Deno.test("thinking round trip: raw fetch, first turn streamed", async () => {
  await using gateway = await startSdkGateway({ sliceBytes: 5 });
  const first = await streamChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.events));
  const message = assembleMessage(chunksOf(first.events));
  const turn = await upstreamTurn(gateway, message);
  assertFirstMessage(message, turn);

  const second = await streamChat(gateway, secondRequest(message));
  assert.equal(second.status, 200, JSON.stringify(second.events));
  assert.equal(assembleMessage(chunksOf(second.events)).content, REPORT);
  assertSecondCall(gateway, turn);
});

Deno.test("thinking round trip: the openai client sends back the message it got", async () => {
  await using gateway = await startSdkGateway();
  const client = openaiClient(gateway);
  const params = FIRST as unknown as ChatCompletionCreateParamsNonStreaming;
  const first = await client.chat.completions.create(params);
  const message = first.choices[0]!.message;
  const turn = await upstreamTurn(gateway, message as unknown as Obj);
  assertFirstMessage(message as unknown as Obj, turn);

  const second = await client.chat.completions.create({
    ...params,
    messages: [
      ASK,
      message,
      { role: "tool", tool_call_id: message.tool_calls![0]!.id, content: "18C and sunny" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, REPORT);
  assertSecondCall(gateway, turn);
});

Deno.test("thinking round trip: the openai client, first turn streamed and assembled", async () => {
  await using gateway = await startSdkGateway({ sliceBytes: 5 });
  const client = openaiClient(gateway);
  const params = FIRST as unknown as ChatCompletionCreateParamsNonStreaming;
  // The SDK's own accumulator (`chat.completions.stream()`) assigns unknown delta fields, so
  // `reasoning_content` and `thinking_blocks` would keep only their last piece: a client that
  // round-trips thinking assembles the deltas itself.
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const message = assembleMessage(chunks);
  const turn = await upstreamTurn(gateway, message);
  assertFirstMessage(message, turn);

  const second = await client.chat.completions.create({
    ...params,
    messages: [
      ASK,
      message as ChatCompletionMessageParam,
      { role: "tool", tool_call_id: message.tool_calls[0].id, content: "18C and sunny" },
    ],
  });
  assert.equal(second.choices[0]!.message.content, REPORT);
  assertSecondCall(gateway, turn);
});

Deno.test("thinking round trip: a tampered signature gets the upstream's 400", async () => {
  await using gateway = await startSdkGateway();
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const message = structuredClone(first.body.choices[0].message);
  const signature: string = message.thinking_blocks[0].signature;
  message.thinking_blocks[0].signature = (signature[0] === "A" ? "B" : "A") + signature.slice(1);

  const second = await postChat(gateway, secondRequest(message));
  assert.equal(second.status, 400, JSON.stringify(second.body));
  assert.equal(second.body.error.type, "invalid_request_error");
  assert.match(second.body.error.message, /signature/);
  assert.equal(typeof second.body.error.code, "string", JSON.stringify(second.body));
  assert.ok(
    gateway.anthropic.violations.some((v) => /Invalid `signature`/.test(v)),
    "the fake's signature check refused it",
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
  await using gateway = await startSdkGateway();
  for (const stream of [false, true]) {
    gateway.anthropic.turns = [{ redacted: true }];
    const first = stream ? await streamChat(gateway, FIRST) : await postChat(gateway, FIRST);
    assert.equal(first.status, 200, JSON.stringify(first));
    const message = "events" in first
      ? assembleMessage(chunksOf(first.events))
      : first.body.choices[0].message;
    gateway.anthropic.turns = [{ redacted: true }];
    const turn = await upstreamTurn(gateway, message);
    assert.equal(turn[0]!.type, "redacted_thinking");
    assertFirstMessage(message, turn);
    const second = await postChat(gateway, secondRequest(message));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assertSecondCall(gateway, turn);
  }
});

Deno.test("thinking round trip: without its thinking blocks, the tool loop still goes through", async () => {
  await using gateway = await startSdkGateway();
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  // A client that keeps only OpenAI's fields: the signed thinking is gone, and Anthropic
  // refuses a thinking request whose tool-use turn does not start with thinking; the gateway
  // must send that request without thinking rather than fail it.
  const { thinking_blocks: _, reasoning_content: __, ...bare } = first.body.choices[0].message;
  const second = await postChat(gateway, secondRequest(bare));
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.choices[0].message.content, REPORT);
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("thinking round trip: Anthropic thinking in history sent to an OpenAI-style model", async () => {
  await using gateway = await startSdkGateway();
  const first = await postChat(gateway, FIRST);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const message = first.body.choices[0].message;
  const signature = message.thinking_blocks?.[0]?.signature;
  assert.equal(typeof signature, "string");
  // The conversation moves to a model on the OpenAI fake, which rejects message fields
  // OpenAI does not know: the gateway drops the foreign thinking on the way.
  const second = await postChat(gateway, { ...secondRequest(message), model: "oa-chat" });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.deepEqual(gateway.openai.violations, []);
  const sent = gateway.openai.last.body as Obj;
  assert.equal(sent.messages[1].role, "assistant");
  assert.equal(sent.messages[1].tool_calls[0].id, message.tool_calls[0].id);
  assert.ok(!JSON.stringify(sent).includes(signature), "no Anthropic signature");
});

Deno.test("thinking round trip: structured output with thinking on is a request Anthropic takes", async () => {
  // Anthropic refuses a forced tool choice while thinking is on, so a JSON schema cannot be
  // forced through a tool then: the gateway must find another way (or leave thinking off).
  const answer = { city: "Paris", celsius: 18 };
  await using gateway = await startSdkGateway();
  const json = structuredScript(gateway.anthropic, answer);
  // A model given the gateway's tool for the answer uses it, forced or not.
  gateway.anthropic.script = (c) =>
    c.tools.length > 0
      ? { text: "", toolCalls: [{ name: c.tools[0]!.name, arguments: answer }] }
      : json(c);
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
