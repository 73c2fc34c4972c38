/**
 * `POST /v1/messages` over raw HTTP on a real port: SSE transcripts read byte for byte and
 * checked against Anthropic's event order (tool calls, thinking, parallel calls, mid-stream
 * failures), Anthropic's error shape, dropped fields, clients that leave, and the log's usage.
 */
import assert from "node:assert/strict";
import { checkTranscript, parseTranscript } from "./support/messages_stream.ts";
import { admin } from "./support/admin.ts";
import { askDirectly, type SdkGateway, startSdkGateway, STYLES } from "./support/sdk_gateway.ts";
import { waitFor } from "./support/wait.ts";
import { startGateway } from "./support/gateway.ts";

const HEADERS = { "anthropic-version": "2023-06-01", "content-type": "application/json" };

function post(
  gateway: SdkGateway,
  body: unknown,
  headers: Record<string, string> = {},
  path = "/v1/messages",
): Promise<Response> {
  return fetch(`${gateway.server.url}${path}`, {
    method: "POST",
    headers: { ...HEADERS, "x-api-key": gateway.apiKey, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

async function transcript(gateway: SdkGateway, body: Record<string, unknown>) {
  const res = await post(gateway, { ...body, stream: true });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return checkTranscript(parseTranscript(text));
}

const TOOLS = [{
  name: "get_weather",
  input_schema: { type: "object", properties: { city: { type: "string" } } },
}];

for (const style of STYLES) {
  Deno.test(`messages/${style.name}: a streamed tool call with thinking follows Anthropic's event order`, async () => {
    await using gateway = await startSdkGateway({ sliceBytes: 5 });
    if (style.name === "openai") gateway.openai.flavour = { reasoning: "A tool will know." };
    const t = await transcript(gateway, {
      model: style.model,
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools: TOOLS,
      messages: [{ role: "user", content: "Call get_weather for Oslo and Bergen" }],
    });
    assert.equal(t.stopReason, "tool_use");
    assert.equal(t.blocks[0]!.type, "thinking");
    const calls = t.blocks.filter((b) => b.type === "tool_use");
    assert.ok(calls.length >= 1);
    for (const call of calls) assert.equal(call.name, "get_weather");
    if (style.scripted) {
      assert.deepEqual(calls.map((c) => c.input), [{ city: "Oslo" }, { city: "Bergen" }]);
    }
  });

  Deno.test(`messages/${style.name}: non-streamed answers carry Anthropic's usage with cache counts`, async () => {
    await using gateway = await startSdkGateway();
    const res = await post(gateway, {
      model: style.model,
      max_tokens: 100,
      messages: [{ role: "user", content: "Hello there" }],
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    for (
      const key of [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
      ]
    ) {
      assert.equal(typeof body.usage[key], "number", key);
    }
    assert.equal(body.stop_sequence, null);
  });
}

Deno.test("messages/openai: parallel tool calls come as one tool_use block each, in order", async () => {
  await using gateway = await startSdkGateway({ sliceBytes: 3 });
  const t = await transcript(gateway, {
    model: "oa-chat",
    max_tokens: 300,
    tools: TOOLS,
    messages: [{ role: "user", content: "Call get_weather for Oslo Bergen Paris Rome" }],
  });
  assert.deepEqual(
    t.blocks.map((b) => b.input),
    [{ city: "Oslo" }, { city: "Bergen" }, { city: "Paris" }, { city: "Rome" }],
  );
});

Deno.test("messages: fields of other back ends are dropped and named; Anthropic-only blocks and tools are a 400 there", async () => {
  await using gateway = await startSdkGateway();
  for (const model of ["sim-vision", "oa-chat"]) {
    const res = await post(gateway, {
      model,
      max_tokens: 50,
      service_tier: "auto",
      container: "c-1",
      messages: [{ role: "user", content: "Hello" }],
    });
    await res.body?.cancel();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-switchyard-dropped-params"), "container,service_tier");
    const doc = await post(gateway, {
      model,
      max_tokens: 50,
      messages: [{
        role: "user",
        content: [{
          type: "search_result",
          source: "https://example.test/a",
          title: "A",
          content: [{ type: "text", text: "x" }],
        }],
      }],
    });
    const body = await doc.json();
    assert.equal(doc.status, 400);
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /^messages\.0\.content\.0\.type: .*search_result/);
  }
  assert.equal(gateway.openai.received.length, 1, "the 400 was answered before any upstream call");
});

Deno.test("messages: a failure mid-stream ends with Anthropic's error event", async () => {
  await using gateway = await startSdkGateway();
  const body = {
    max_tokens: 200,
    messages: [{ role: "user", content: "Hello there, how are you" }],
  };
  gateway.openai.faults = [{ breakAfterEvents: 3 }];
  const broken = await transcript(gateway, { ...body, model: "oa-chat" });
  assert.equal(broken.error?.type, "api_error");
  // Forwarded: the upstream's own error event comes through as it was sent.
  gateway.anthropic.faults = [{ errorAfterEvents: 3 }];
  const overloaded = await transcript(gateway, { ...body, model: "an-chat" });
  assert.deepEqual(overloaded.error, { type: "overloaded_error", message: "Overloaded" });
  // Forwarded, and the connection breaks: the gateway's own error event.
  gateway.anthropic.faults = [{ breakAfterEvents: 3 }];
  const cut = await transcript(gateway, { ...body, model: "an-chat" });
  assert.equal(cut.error?.type, "api_error");
  // None of the three is logged as a success: the forwarded error event is the upstream's
  // failure, logged as the error the gateway's own translation would have answered.
  const logged = () =>
    gateway.server.output.records().filter((r) => r.path === "/v1/messages" && r.stream);
  await waitFor(() => logged().length === 3, "three log records");
  assert.deepEqual(logged().map((r) => [r.model, r.status, r.error]), [
    ["oa-chat", 502, "upstream_error"],
    ["an-chat", 502, "upstream_error"],
    ["an-chat", 502, "upstream_error"],
  ]);
});

Deno.test("messages: upstream errors before the stream begins are HTTP errors in Anthropic's shape", async () => {
  await using gateway = await startSdkGateway();
  gateway.anthropic.faults = [{
    status: 429,
    errorType: "rate_limit_error",
    headers: { "retry-after": "7" },
  }];
  const res = await post(gateway, {
    model: "an-chat",
    max_tokens: 10,
    stream: true,
    messages: [{ role: "user", content: "Hi" }],
  });
  const body = await res.json();
  assert.equal(res.status, 429);
  assert.equal(body.error.type, "rate_limit_error");
  assert.equal(res.headers.get("retry-after"), "7");
});

for (const model of ["oa-chat", "an-chat"]) {
  Deno.test(`messages: a client that leaves a stream of ${model} aborts the upstream call and is logged 499`, async () => {
    await using gateway = await startSdkGateway();
    const fake = model === "oa-chat" ? gateway.openai : gateway.anthropic;
    fake.faults = [{ stallAfterEvents: 2 }];
    const res = await post(gateway, {
      model,
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "Hello there" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    assert.match(await fake.last.gone, /./);
    await waitFor(
      () =>
        gateway.server.output.records().some((r) => r.path === "/v1/messages" && r.status === 499),
      "the 499 log record",
    );
  });
}

for (const style of STYLES) {
  Deno.test(`messages/${style.name}: the log records the streamed call's usage`, async () => {
    await using gateway = await startSdkGateway();
    const t = await transcript(gateway, {
      model: style.model,
      max_tokens: 100,
      messages: [{ role: "user", content: "Hello there" }],
    });
    await waitFor(
      () => gateway.server.output.records().some((r) => r.path === "/v1/messages"),
      "the log record",
    );
    const record = gateway.server.output.records().find((r) => r.path === "/v1/messages")!;
    assert.equal(record.status, 200);
    assert.equal(record.model, style.model);
    assert.equal(record.completion_tokens, t.usage.output_tokens);
    const input = (t.usage.input_tokens as number) + (t.usage.cache_read_input_tokens as number) +
      (t.usage.cache_creation_input_tokens as number);
    assert.equal(record.prompt_tokens, input, "the log counts cached tokens as input too");
  });
}

Deno.test("messages: Claude Code's way in: Authorization Bearer, count_tokens?beta=true, /v1/models with anthropic-version", async () => {
  await using gateway = await startSdkGateway();
  const headers = { "x-api-key": "", authorization: `Bearer ${gateway.apiKey}` };
  const count = await post(
    gateway,
    { model: "an-chat", messages: [{ role: "user", content: "Hi" }] },
    { ...headers, "anthropic-beta": "token-counting-2024-11-01" },
    "/v1/messages/count_tokens?beta=true",
  );
  const counted = await count.json();
  assert.equal(count.status, 200, JSON.stringify(counted));
  assert.equal(typeof counted.input_tokens, "number");
  assert.equal(gateway.anthropic.last.headers.get("anthropic-beta"), "token-counting-2024-11-01");
  const models = await fetch(`${gateway.server.url}/v1/models`, {
    headers: { "anthropic-version": "2023-06-01", authorization: `Bearer ${gateway.apiKey}` },
  });
  const list = await models.json();
  assert.equal(list.has_more, false);
  assert.equal(list.first_id, list.data[0].id);
  assert.equal(list.last_id, list.data.at(-1).id);
  const openai = await (await fetch(`${gateway.server.url}/v1/models`, {
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  })).json();
  assert.equal(openai.object, "list", "without anthropic-version: OpenAI's shape");
});

/** `POST /v1/messages/count_tokens` of one user message: the status, body and content type. */
async function countTokens(gateway: SdkGateway, model: string, content = "How many tokens?") {
  const res = await post(
    gateway,
    { model, messages: [{ role: "user", content }] },
    {},
    "/v1/messages/count_tokens",
  );
  return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
}

Deno.test("messages/anthropic: count_tokens on an upstream without it (404, 405) is the gateway's estimate; other failures keep their mapping", async () => {
  await using gateway = await startSdkGateway({ provider: { timeout_ms: 1_000 } });
  const fake = gateway.anthropic;
  // The estimate: what an OpenAI-style upstream, which has no count_tokens, is answered with.
  const estimate = await countTokens(gateway, "oa-chat");
  assert.equal(estimate.status, 200);
  assert.equal(typeof estimate.body.input_tokens, "number");
  const exact = await countTokens(gateway, "an-chat");
  assert.equal(exact.status, 200);
  assert.notEqual(exact.body.input_tokens, estimate.body.input_tokens, "the fake counts its own");
  for (const status of [404, 405] as const) {
    fake.countTokens = status;
    const asked = fake.received.length;
    const counted = await countTokens(gateway, "an-chat");
    assert.equal(counted.status, 200, `upstream ${status}: ${JSON.stringify(counted.body)}`);
    assert.equal(counted.type, "application/json");
    assert.deepEqual(counted.body, estimate.body, `upstream ${status}: the estimate`);
    assert.deepEqual(
      fake.received.slice(asked).map((r) => r.path),
      ["/v1/messages/count_tokens"],
      "the upstream was asked first, once",
    );
  }
  assert.deepEqual(fake.violations, []);

  // Whatever else fails keeps the mapping of every upstream call, in Anthropic's shape.
  fake.countTokens = "count";
  const failures = [
    { fault: { status: 500 }, status: 502, type: "api_error" },
    { fault: { status: 401, errorType: "authentication_error" }, status: 502, type: "api_error" },
    { fault: { status: 400, errorType: "invalid_request_error" }, status: 400 },
    { fault: { delayMs: 5_000 }, status: 504, type: "timeout_error" },
  ];
  for (const { fault, status, type } of failures) {
    fake.faults = [fault];
    const failed = await countTokens(gateway, "an-chat");
    assert.equal(failed.status, status, `${JSON.stringify(fault)}: ${JSON.stringify(failed.body)}`);
    assert.equal(failed.body.type, "error");
    assert.equal(failed.body.error.type, type ?? "invalid_request_error");
  }

  // Logged as the estimate is: a 200 without an error or input tokens; the others as failures.
  const counts = () =>
    gateway.server.output.records().filter((r) => r.path === "/v1/messages/count_tokens");
  await waitFor(() => counts().length === 8, "eight log records");
  const logged = counts().map((r) => [r.model, r.provider, r.status, r.error, r.prompt_tokens]);
  assert.deepEqual(logged, [
    ["oa-chat", "oa", 200, null, null],
    ["an-chat", "an", 200, null, null],
    ["an-chat", "an", 200, null, null],
    ["an-chat", "an", 200, null, null],
    ["an-chat", "an", 502, "upstream_error", null],
    ["an-chat", "an", 502, "upstream_error", null],
    ["an-chat", "an", 400, "invalid_request_error", null],
    ["an-chat", "an", 504, "upstream_timeout", null],
  ]);
});

Deno.test("messages: count_tokens and a translated stream's message_start give one estimate of a long conversation, every time", async () => {
  await using gateway = await startSdkGateway();
  const long = "A paragraph of a long conversation, resent on every turn. ".repeat(50);
  const first = await countTokens(gateway, "oa-chat", long);
  const again = await countTokens(gateway, "oa-chat", long);
  const other = await countTokens(gateway, "oa-chat", `${long}One more sentence.`);
  assert.equal(first.status, 200);
  assert.deepEqual(again.body, first.body);
  assert.ok(other.body.input_tokens > first.body.input_tokens, JSON.stringify(other.body));
  // The message_start of a translated stream carries the same estimate.
  const res = await post(gateway, {
    model: "oa-chat",
    max_tokens: 16,
    stream: true,
    messages: [{ role: "user", content: long }],
  });
  const text = await res.text();
  const start = JSON.parse(/event: message_start\ndata: (.*)\n/.exec(text)![1]!);
  assert.equal(start.message.usage.input_tokens, first.body.input_tokens);
});

Deno.test("messages/anthropic: count_tokens without the endpoint is no route failure: no fallback, breakers closed", async () => {
  await using gateway = await startSdkGateway({
    models: [{
      id: "an-routed",
      chat_completions: true,
      routes: [
        { provider: "an", upstream_model: "claude-a" },
        { provider: "an", upstream_model: "claude-b" },
      ],
    }],
  });
  const fake = gateway.anthropic;
  fake.countTokens = 404;
  const estimate = (await countTokens(gateway, "oa-chat")).body;
  // More calls than it takes to open a breaker (5 failures in a row).
  for (let i = 0; i < 6; i++) {
    const counted = await countTokens(gateway, "an-routed");
    assert.equal(counted.status, 200, JSON.stringify(counted.body));
    assert.deepEqual(counted.body, estimate);
  }
  const asked = fake.received.filter((r) => r.path === "/v1/messages/count_tokens");
  assert.equal(asked.length, 6, "one route asked per call: no fallback to the next");
  const routes = await admin(gateway.server, "GET", "/admin/routes");
  assert.equal(routes.status, 200);
  const health = routes.body.data.filter((r: { model: string }) => r.model === "an-routed");
  assert.equal(health.length, 2);
  for (const route of health) {
    assert.equal(route.state, "closed", JSON.stringify(route));
    assert.equal(route.failures, 0, JSON.stringify(route));
  }
  const message = await post(gateway, {
    model: "an-routed",
    max_tokens: 20,
    messages: [{ role: "user", content: "Hello" }],
  });
  assert.equal(message.status, 200, await message.text());
});

Deno.test("messages: 404 for an unknown model and 401 for a bad key come in Anthropic's shape", async () => {
  await using gateway = await startSdkGateway();
  const unknown = await post(gateway, {
    model: "nope",
    max_tokens: 5,
    messages: [{ role: "user", content: "Hi" }],
  });
  assert.equal(unknown.status, 404);
  const body = await unknown.json();
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "not_found_error");
  assert.match(body.error.message, /^model: /);
  const bad = await post(gateway, { model: "sim-chat" }, { "x-api-key": "sk-bad" });
  assert.equal(bad.status, 401);
  assert.equal((await bad.json()).error.type, "authentication_error");
});

Deno.test("messages: capability flags are checked with Messages paths", async () => {
  await using gateway = await startSdkGateway();
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      {
        messages: [{
          role: "user",
          content: [{ type: "text", text: "See" }, {
            type: "image",
            source: { type: "url", url: "https://example.com/cat.png" },
          }],
        }],
      },
      /^messages\.0\.content\.1: .*image_input/,
    ],
    [{ tools: TOOLS, messages: [{ role: "user", content: "Hi" }] }, /^tools: .*function calling/],
    [
      {
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
        ],
      },
      /^messages\.1\.content\.0: .*function calling/,
    ],
  ];
  for (const [body, message] of cases) {
    // sim-chat has neither image input nor function calling.
    const res = await post(gateway, { model: "sim-chat", max_tokens: 10, ...body });
    const answer = await res.json();
    assert.equal(res.status, 400, JSON.stringify(answer));
    assert.equal(answer.error.type, "invalid_request_error");
    assert.match(answer.error.message, message);
  }
});

Deno.test("messages: a conversation moved from the simulator to an Anthropic model leaves the simulator's thinking behind", async () => {
  await using gateway = await startSdkGateway();
  const first = await (await post(gateway, {
    model: "sim-vision",
    max_tokens: 2000,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [{ role: "user", content: "Hello there" }],
  })).json();
  assert.equal(first.content[0].type, "thinking");
  const messages = [
    { role: "user", content: "Hello there" },
    { role: "assistant", content: first.content },
    { role: "user", content: "And now?" },
  ];
  const res = await post(gateway, { model: "an-chat", max_tokens: 100, messages });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  const sent = gateway.anthropic.last.body as { messages: { content: unknown }[] };
  assert.deepEqual(sent.messages[1]!.content, first.content.slice(1), "only the text went on");
  assert.deepEqual(gateway.anthropic.violations, []);
});

Deno.test("messages/anthropic: a forwarded stream is the upstream's, event for event, but for the model id", async () => {
  await using gateway = await startSdkGateway({ sliceBytes: 11 });
  const res = await post(gateway, {
    model: "an-chat",
    max_tokens: 2000,
    stream: true,
    thinking: { type: "enabled", budget_tokens: 1024 },
    tools: TOOLS,
    messages: [{ role: "user", content: "Call get_weather for Oslo" }],
  });
  const ours = parseTranscript(await res.text());
  const theirs = await askDirectly(gateway.anthropic) as Record<string, unknown>[];
  const same = (data: Record<string, unknown>) =>
    JSON.stringify(data).replace(/msg_fake\d+/, "msg_x").replace(/toolu_fake\d+/g, "toolu_x");
  assert.equal(ours.length, theirs.length);
  ours.forEach(({ data }, i) => {
    const upstream = structuredClone(theirs[i]!);
    if (upstream.type === "message_start") {
      (upstream.message as Record<string, unknown>).model = "an-chat";
    }
    assert.equal(same(data), same(upstream), `event ${i}`);
  });
});

/** The message of the 400 that `body` gets, checked to be in Anthropic's error shape. */
async function refusal(gateway: SdkGateway, body: Record<string, unknown>): Promise<string> {
  const res = await post(gateway, { max_tokens: 50, ...body });
  const answer = await res.json();
  assert.equal(res.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(answer)}`);
  assert.equal(answer.type, "error");
  assert.equal(answer.error.type, "invalid_request_error");
  return answer.error.message;
}

const toolUse = (...ids: string[]) => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "tool_use", id, name: "get_weather", input: {} })),
});
const toolResult = (...ids: string[]) => ({
  role: "user",
  content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "21 C" })),
});

Deno.test("messages: tool_use and tool_result blocks must pair up, as Anthropic's API requires, refused in its words", async () => {
  await using gateway = await startSdkGateway();
  const ask = { role: "user", content: "Use get_weather" };
  const unanswered = (ids: string) =>
    new RegExp(
      `^messages\\.1: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}\\. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message$`,
    );
  const cases: [unknown[], RegExp][] = [
    [[ask, toolUse("toolu_1"), { role: "user", content: "next" }], unanswered("toolu_1")],
    [[ask, toolUse("toolu_1", "toolu_2"), toolResult("toolu_1")], unanswered("toolu_2")],
    // A tool_use in a last assistant message (a prefill) has nothing after it to answer it.
    [[ask, toolUse("toolu_1")], unanswered("toolu_1")],
    [
      [ask, { role: "assistant", content: "No tools." }, toolResult("toolu_9")],
      /^messages\.2\.content\.0\.tool_use_id: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9\. Each `tool_result` block must have a corresponding `tool_use` block in the previous message$/,
    ],
    [
      [ask, toolUse("toolu_1", "toolu_1"), toolResult("toolu_1")],
      /^messages\.1\.content\.1\.id: `tool_use` ids must be unique$/,
    ],
    [
      [ask, toolUse("toolu_1"), toolResult("toolu_1", "toolu_1")],
      /^messages\.2\.content\.1\.tool_use_id: each tool_use must have a single result/,
    ],
  ];
  for (const model of ["sim-vision", "oa-chat", "an-chat"]) {
    for (const [messages, words] of cases) {
      assert.match(await refusal(gateway, { model, tools: TOOLS, messages }), words, model);
    }
    // Answered in the next message, in any order, with text after the results.
    const next = {
      role: "user",
      content: [...toolResult("toolu_2", "toolu_1").content, { type: "text", text: "Thanks" }],
    };
    const res = await post(gateway, {
      model,
      max_tokens: 50,
      tools: TOOLS,
      messages: [ask, toolUse("toolu_1", "toolu_2"), next],
    });
    assert.equal(res.status, 200, await res.text());
  }
  assert.equal(gateway.openai.received.length, 1, "only the valid conversation went upstream");
  assert.equal(gateway.anthropic.received.length, 1, "only the valid conversation went upstream");
});

Deno.test("messages: an empty message is a 400 in Anthropic's words, but for a last assistant message", async () => {
  await using gateway = await startSdkGateway();
  const words =
    /^messages\.\d: all messages must have non-empty content except for the optional final assistant message$/;
  const hi = { role: "user", content: "Hi" };
  for (const content of ["", []]) {
    for (const model of ["sim-vision", "oa-chat"]) {
      const first = await refusal(gateway, { model, messages: [{ role: "user", content }] });
      assert.match(first, /^messages\.0: /);
      assert.match(first, words);
      const middle = await refusal(gateway, {
        model,
        messages: [hi, { role: "assistant", content }, { role: "user", content: "Again" }],
      });
      assert.match(middle, /^messages\.1: /);
      assert.match(middle, words);
      const last = await refusal(gateway, { model, messages: [hi, { role: "user", content }] });
      assert.match(last, /^messages\.1: /);
      // A last assistant message may be empty (Anthropic's "optional final assistant message").
      const prefill = await post(gateway, {
        model,
        max_tokens: 50,
        messages: [hi, { role: "assistant", content }],
      });
      assert.equal(prefill.status, 200, await prefill.text());
    }
  }
});

Deno.test("messages: a plain http:// image URL is a 400 invalid_image in the chat endpoint's words", async () => {
  await using gateway = await startSdkGateway();
  const image = (url: string) => ({ type: "image", source: { type: "url", url } });
  const reason = "expected a base64 image data URL or an https:// URL, but got a plain http:// URL";
  const inMessage = await refusal(gateway, {
    model: "sim-vision",
    messages: [{ role: "user", content: [{ type: "text", text: "See" }, image("http://a/b.png")] }],
  });
  assert.match(inMessage, /^messages\.0\.content\.1\.source\.url: /);
  assert.ok(inMessage.endsWith(reason), inMessage);
  const inResult = await refusal(gateway, {
    model: "sim-vision",
    tools: TOOLS,
    messages: [{ role: "user", content: "Use get_weather" }, toolUse("toolu_1"), {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [image("HTTP://a/b")] }],
    }],
  });
  assert.match(inResult, /^messages\.2\.content\.0\.content\.0\.source\.url: /);
  assert.ok(inResult.endsWith(reason), inResult);
  // The chat endpoint says the same, with the same code, which the log keeps for both.
  const chat = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.apiKey}` },
    body: JSON.stringify({
      model: "sim-vision",
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: "http://a/b.png" } }],
      }],
    }),
  });
  const answer = await chat.json();
  assert.equal(answer.error.code, "invalid_image");
  assert.ok(answer.error.message.endsWith(`: ${reason}.`), answer.error.message);
  await waitFor(
    () => gateway.server.output.records().filter((r) => r.status === 400).length === 3,
    "three log records",
  );
  const errors = gateway.server.output.records().filter((r) => r.status === 400).map((r) => [
    r.path,
    r.error,
  ]);
  assert.deepEqual(errors, [
    ["/v1/messages", "invalid_image"],
    ["/v1/messages", "invalid_image"],
    ["/v1/chat/completions", "invalid_image"],
  ]);
  const https = await post(gateway, {
    model: "sim-vision",
    max_tokens: 50,
    messages: [{ role: "user", content: [image("https://example.com/b.png")] }],
  });
  assert.equal(https.status, 200, await https.text());
});

Deno.test("messages: a call passed through to an Anthropic back end goes as the client wrote it, with only the model set, byte for byte", async () => {
  await using gw = await startGateway();
  const body =
    '{\n  "max_tokens": 64,\n  "messages": [{"role": "user", "content": "caf\\u00e9 \\"model\\": x"}],' +
    '\n  "model" :  "an-chat",\n  "tools": [{"name": "f", "input_schema": {"type": "object", ' +
    '"properties": {"model": {"type": "string"}}}}]\n}';
  const res = await fetch(`${gw.server.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body,
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  assert.equal(gw.anthropic.last.text, body.replace('"an-chat"', '"claude-up"'));
});
