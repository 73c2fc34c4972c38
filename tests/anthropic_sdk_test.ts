/**
 * The Messages API front door driven by the official `@anthropic-ai/sdk` over a real port,
 * against the three provider styles side by side: the simulator, a model behind the fake
 * OpenAI-style upstream (through the canonical model) and one behind the fake Anthropic
 * upstream (forwarded as written, only the model id rewritten).
 */
import assert from "node:assert/strict";
import Anthropic from "npm:@anthropic-ai/sdk@1.12.0";
import {
  CALL_TIMEOUT_MS,
  createKey,
  type SdkGateway,
  startSdkGateway,
  STYLES,
} from "./support/sdk_gateway.ts";
import { checkTranscript, parseTranscript } from "./support/messages_stream.ts";

/** The SDK on the gateway (its root: the SDK appends `/v1/messages`), no retries. */
function client(gateway: SdkGateway, apiKey = gateway.apiKey): Anthropic {
  return new Anthropic({
    baseURL: gateway.server.url,
    apiKey,
    maxRetries: 0,
    timeout: CALL_TIMEOUT_MS,
  });
}

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

function textOf(message: Anthropic.Message): string {
  return message.content.map((b) => b.type === "text" ? b.text : "").join("");
}

for (const style of STYLES) {
  Deno.test(`anthropic-sdk/${style.name}: messages.create answers a message under the gateway's model id`, async () => {
    await using gateway = await startSdkGateway();
    const message = await client(gateway).messages.create({
      model: style.model,
      max_tokens: 200,
      system: "You are terse.",
      messages: [{ role: "user", content: "Hello there" }],
    });
    assert.match(message.id, /^msg_/);
    assert.equal(message.type, "message");
    assert.equal(message.role, "assistant");
    assert.equal(message.model, style.model);
    assert.equal(message.stop_reason, "end_turn");
    assert.match(textOf(message), /Hello there/);
    assert.ok(message.usage.input_tokens > 0, "input tokens counted");
    assert.ok(message.usage.output_tokens > 0, "output tokens counted");
    const fake = gateway.fakeOf(style);
    if (fake) assert.deepEqual(fake.violations, []);
  });

  Deno.test(`anthropic-sdk/${style.name}: messages.stream().finalMessage() and the raw SSE bytes agree with Anthropic's event order`, async () => {
    await using gateway = await startSdkGateway({ sliceBytes: 7 });
    const sdk = client(gateway);
    const params = {
      model: style.model,
      max_tokens: 200,
      messages: [{ role: "user" as const, content: "Hello there" }],
    };
    const stream = sdk.messages.stream(params);
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const final = await stream.finalMessage();
    assert.equal(final.model, style.model);
    assert.equal(final.stop_reason, "end_turn");
    assert.match(textOf(final), /Hello there/);
    assert.equal(texts.join(""), textOf(final), "the text events add up to the final text");
    assert.ok(final.usage.input_tokens > 0 && final.usage.output_tokens > 0);

    // The same call over raw fetch: every event in order and in shape.
    const res = await fetch(`${gateway.server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": gateway.apiKey,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: JSON.stringify({ ...params, stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const t = checkTranscript(parseTranscript(await res.text()));
    assert.equal(t.message.model, style.model);
    assert.equal(t.stopReason, "end_turn");
    assert.equal(t.blocks.map((b) => b.text).join(""), textOf(final));
    assert.ok(
      (t.message.usage as { input_tokens: number }).input_tokens > 0,
      "message_start has input usage",
    );
    assert.equal(t.usage.input_tokens, final.usage.input_tokens);
  });

  Deno.test(`anthropic-sdk/${style.name}: a tool-use loop (tool_use → tool_result → answer)`, async () => {
    await using gateway = await startSdkGateway();
    const sdk = client(gateway);
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "Use get_weather for Paris please" },
    ];
    const first = await sdk.messages.create({
      model: style.model,
      max_tokens: 300,
      tools: [WEATHER],
      messages,
    });
    assert.equal(first.stop_reason, "tool_use");
    const call = first.content.find((b) => b.type === "tool_use");
    assert.ok(call && call.type === "tool_use", JSON.stringify(first.content));
    assert.equal(call.name, "get_weather");
    assert.equal(typeof call.input, "object");
    messages.push({ role: "assistant", content: first.content });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: call.id, content: "Sunny, 21 degrees" }],
    });
    // The second turn streamed, so the stream's tool blocks round-trip too.
    const second = await sdk.messages.stream({
      model: style.model,
      max_tokens: 300,
      tools: [WEATHER],
      messages,
    }).finalMessage();
    assert.equal(second.stop_reason, "end_turn");
    assert.ok(textOf(second).length > 0, "an answer after the tool result");
    if (style.scripted) assert.match(textOf(second), /Sunny, 21 degrees/);
    const fake = gateway.fakeOf(style);
    if (fake) assert.deepEqual(fake.violations, []);
  });

  Deno.test(`anthropic-sdk/${style.name}: thinking comes signed and goes back in the next turn`, async () => {
    await using gateway = await startSdkGateway();
    if (style.name === "openai") {
      gateway.openai.flavour = { reasoning: "The user wants the weather: call the tool." };
    }
    const sdk = client(gateway);
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "Use get_weather for Paris please" },
    ];
    const first = await sdk.messages.stream({
      model: style.model,
      max_tokens: 2048,
      thinking,
      tools: [WEATHER],
      messages,
    }).finalMessage();
    const block = first.content[0];
    assert.ok(block?.type === "thinking", `thinking first: ${JSON.stringify(first.content)}`);
    assert.ok(block.thinking.length > 0, "with its text");
    assert.ok(block.signature.length > 0, "and a signature");
    const call = first.content.find((b) => b.type === "tool_use");
    assert.ok(call?.type === "tool_use");
    messages.push({ role: "assistant", content: first.content });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: call.id, content: "Rain" }],
    });
    const second = await sdk.messages.create({
      model: style.model,
      max_tokens: 2048,
      thinking,
      tools: [WEATHER],
      messages,
    });
    assert.equal(second.stop_reason, "end_turn");
    const fake = gateway.fakeOf(style);
    if (style.name === "anthropic") {
      // The fake checks every signature it gets back against the one it gave.
      const sent = (fake!.last.body as { messages: { content: { type: string }[] }[] }).messages;
      assert.deepEqual(sent[1]!.content[0], block, "the thinking block went back unchanged");
      assert.deepEqual(fake!.violations, []);
    }
  });

  Deno.test(`anthropic-sdk/${style.name}: countTokens`, async () => {
    await using gateway = await startSdkGateway();
    const sdk = client(gateway);
    const params = {
      model: style.model,
      system: "You are terse.",
      messages: [{ role: "user" as const, content: "How many tokens are in this prompt?" }],
    };
    const counted = await sdk.messages.countTokens(params);
    assert.ok(counted.input_tokens > 0);
    const answered = await sdk.messages.create({ ...params, max_tokens: 50 });
    if (style.name !== "openai") {
      // Exact: the simulator's own count, the Anthropic upstream's own endpoint.
      assert.equal(counted.input_tokens, answered.usage.input_tokens);
    }
    if (style.name === "anthropic") {
      const received = gateway.anthropic.received.find((r) =>
        r.path === "/v1/messages/count_tokens"
      );
      assert.ok(received, "the upstream's own count_tokens was asked");
      assert.deepEqual(received.body, { ...params, model: "claude-up" });
    }
  });
}

Deno.test("anthropic-sdk: countTokens on an Anthropic-style upstream without count_tokens (404, 405) is the gateway's estimate", async () => {
  await using gateway = await startSdkGateway();
  const sdk = client(gateway);
  const params = {
    model: "an-chat",
    messages: [{ role: "user" as const, content: "How many tokens are in this prompt?" }],
  };
  const estimate = (await sdk.messages.countTokens({ ...params, model: "sim-vision" }))
    .input_tokens;
  for (const status of [404, 405]) {
    gateway.anthropic.faults = [{ status, errorType: "not_found_error", message: "no such path" }];
    const counted = await sdk.messages.countTokens(params);
    assert.equal(counted.input_tokens, estimate, `upstream ${status}`);
    assert.equal(gateway.anthropic.faults.length, 0, "the upstream was asked first");
  }
  // Other failures keep their mapping: a 500 is still the gateway's 502.
  gateway.anthropic.faults = [{ status: 500 }, { status: 500 }, { status: 500 }];
  await assert.rejects(sdk.messages.countTokens(params), (e: unknown) => {
    assert.equal((e as { status?: number }).status, 502);
    return true;
  });
});

Deno.test("anthropic-sdk: a tool call that max_tokens cuts short has the same input streamed or not", async () => {
  await using gateway = await startSdkGateway();
  const sdk = client(gateway);
  const tools: Anthropic.Tool[] = [WEATHER, {
    name: "get_time",
    input_schema: { type: "object", properties: { zone: { type: "string" } } },
  }];
  const messages: Anthropic.MessageParam[] = [
    { role: "user", content: "Use get_weather and get_time" },
  ];
  // The simulator's calls take 20 tokens: every cut from inside the first call's arguments to
  // inside the second's.
  for (let max_tokens = 5; max_tokens < 20; max_tokens++) {
    const params = { model: "sim-vision", max_tokens, tools, messages };
    const answered = await sdk.messages.create(params);
    // The SDK's stream helper reads each tool_use block's partial JSON as it comes.
    const streamed = await sdk.messages.stream(params).finalMessage();
    assert.equal(answered.stop_reason, "max_tokens");
    assert.equal(streamed.stop_reason, "max_tokens");
    const inputs = (m: Anthropic.Message) =>
      m.content.map((b) => b.type === "tool_use" ? b.input : b.type);
    assert.deepEqual(inputs(answered), inputs(streamed), `max_tokens ${max_tokens}`);
    if (max_tokens === 7) assert.deepEqual(inputs(answered), [{}], "the cut value is left out");
  }
});

Deno.test("anthropic-sdk: models.list and models.retrieve answer in Anthropic's model shape", async () => {
  await using gateway = await startSdkGateway();
  const sdk = client(gateway);
  const ids: string[] = [];
  for await (const model of sdk.models.list()) {
    assert.equal(model.type, "model");
    assert.equal(typeof model.display_name, "string");
    assert.ok(!Number.isNaN(Date.parse(model.created_at)), "created_at is a date");
    assert.match(model.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    ids.push(model.id);
  }
  for (const style of STYLES) assert.ok(ids.includes(style.model), `${style.model} is listed`);
  const one = await sdk.models.retrieve("an-chat");
  assert.equal(one.id, "an-chat");
  assert.equal(one.type, "model");
  await assert.rejects(sdk.models.retrieve("no-such-model"), Anthropic.NotFoundError);
});

Deno.test("anthropic-sdk: forwarding to an Anthropic upstream changes only the model, and passes the version and betas", async () => {
  await using gateway = await startSdkGateway();
  const sdk = client(gateway);
  const body = {
    model: "an-chat",
    max_tokens: 100,
    system: [{
      type: "text" as const,
      text: "Long shared instructions.",
      cache_control: { type: "ephemeral" as const },
    }],
    messages: [{
      role: "user" as const,
      content: [{
        type: "text" as const,
        text: "Hello there",
        cache_control: { type: "ephemeral" as const, ttl: "1h" as const },
      }],
    }],
    metadata: { user_id: "u-42" },
    service_tier: "auto" as const,
    temperature: 0.3,
  };
  const { data, response } = await sdk.messages.create(body, {
    headers: { "anthropic-beta": "prompt-caching-2024-07-31,extended-cache-ttl-2025-04-11" },
  }).withResponse();
  assert.equal(data.model, "an-chat");
  assert.equal(response.headers.get("x-switchyard-dropped-params"), null, "nothing dropped");
  const received = gateway.anthropic.last;
  assert.deepEqual(received.body, { ...body, model: "claude-up" });
  assert.deepEqual(
    Object.keys(received.body as object),
    Object.keys(body),
    "in the client's order",
  );
  assert.equal(
    received.headers.get("anthropic-beta"),
    "prompt-caching-2024-07-31,extended-cache-ttl-2025-04-11",
  );
  assert.equal(received.headers.get("anthropic-version"), "2026-10-21", "the SDK's version");
  assert.equal(
    received.headers.get("x-api-key"),
    gateway.anthropic.apiKey,
    "the gateway's key upstream",
  );
  assert.ok(data.usage.cache_creation_input_tokens! > 0, "the prompt cache was written");
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("anthropic-sdk: bad input raises BadRequestError with Anthropic's invalid_request_error and the field's path", async () => {
  await using gateway = await startSdkGateway();
  const sdk = client(gateway);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ model: "sim-vision", messages: [{ role: "user", content: "hi" }] }, /^max_tokens: /],
    [{ model: "sim-vision", max_tokens: 10, messages: [] }, /^messages: /],
    [
      { model: "sim-vision", max_tokens: 10, messages: [{ role: "robot", content: "hi" }] },
      /^messages\.0\.role: /,
    ],
    [
      {
        model: "sim-vision",
        max_tokens: 10,
        messages: [{
          role: "user",
          content: [{ type: "text", text: "a" }, {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: "bm90IGFuIGltYWdl" },
          }],
        }],
      },
      /^messages\.0\.content\.1\.source\.data: /,
    ],
    [{
      model: "sim-vision",
      max_tokens: 10,
      temperature: 1.5,
      messages: [{ role: "user", content: "hi" }],
    }, /^temperature: /],
    [{
      model: "sim-vision",
      max_tokens: 10,
      tools: [{ name: "x", input_schema: { type: "array" } }],
      messages: [{ role: "user", content: "hi" }],
    }, /^tools\.0\.input_schema\.type: /],
    [{
      model: "sim-vision",
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 10 },
      messages: [{ role: "user", content: "hi" }],
    }, /^thinking\.budget_tokens: /],
    [{
      model: "sim-vision",
      max_tokens: 10,
      tool_choice: { type: "tool", name: "nope" },
      messages: [{ role: "user", content: "hi" }],
    }, /^tool_choice\.name: /],
  ];
  for (const [body, path] of cases) {
    const error = await sdk.messages.create(body as never).then(
      () => assert.fail(`accepted: ${JSON.stringify(body)}`),
      (e) => e,
    );
    assert.ok(error instanceof Anthropic.BadRequestError, String(error));
    assert.equal(error.status, 400);
    const wire = error.error as { type: string; error: { type: string; message: string } };
    assert.equal(wire.type, "error");
    assert.equal(wire.error.type, "invalid_request_error");
    assert.match(wire.error.message, path);
  }
});

Deno.test("anthropic-sdk: 401, 403, 404 and 429 raise the SDK's typed errors", async () => {
  await using gateway = await startSdkGateway();
  const params = { max_tokens: 20, messages: [{ role: "user" as const, content: "hi" }] };
  const shape = (error: unknown, type: string) => {
    const wire = (error as { error: { type: string; error: { type: string } } }).error;
    assert.equal(wire.type, "error");
    assert.equal(wire.error.type, type);
  };
  const auth = await client(gateway, "sk-not-a-key").messages.create({
    ...params,
    model: "sim-vision",
  })
    .catch((e) => e);
  assert.ok(auth instanceof Anthropic.AuthenticationError, String(auth));
  shape(auth, "authentication_error");

  const narrow = await createKey(gateway.server, { models: ["sim-chat"] });
  const denied = await client(gateway, narrow).messages.create({ ...params, model: "sim-vision" })
    .catch((e) => e);
  assert.ok(denied instanceof Anthropic.PermissionDeniedError, String(denied));
  shape(denied, "permission_error");

  const missing = await client(gateway).messages.create({ ...params, model: "no-such-model" })
    .catch((e) => e);
  assert.ok(missing instanceof Anthropic.NotFoundError, String(missing));
  shape(missing, "not_found_error");

  const limited = await createKey(gateway.server, { limits: { chat: { per_minute: 1 } } });
  const sdk = client(gateway, limited);
  await sdk.messages.countTokens({ model: "sim-vision", messages: params.messages });
  const over = await sdk.messages.create({ ...params, model: "sim-vision" }).catch((e) => e);
  assert.ok(over instanceof Anthropic.RateLimitError, String(over));
  shape(over, "rate_limit_error");
});
