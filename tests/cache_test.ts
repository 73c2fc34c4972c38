/**
 * The response cache end to end (issue #37): a gateway on a real port over fake upstreams that
 * record what they receive, asked through the chat completions, Messages and Responses doors,
 * streamed and not.
 */
import assert from "node:assert/strict";
import { logRecord } from "./support/client.ts";
import type { FakeAnthropic } from "./support/fake_anthropic.ts";
import { eventually } from "./support/eventually.ts";
import { startGateway } from "./support/gateway.ts";
import type { FakeClock } from "./support/server.ts";
import type { Gateway } from "./support/gateway.ts";

const CACHED = { chat_completions: true, function_calling: true, image_input: true };
/** A model on the fake OpenAI upstream with a cache, one on the fake Anthropic upstream. */
const MODELS = [
  {
    id: "oa-cached",
    provider: "oa",
    upstream_model: "gpt-up",
    ...CACHED,
    cache: { ttl_seconds: 60, max_ttl_seconds: 600 },
  },
  {
    id: "an-cached",
    provider: "an",
    upstream_model: "claude-up",
    ...CACHED,
    cache: { ttl_seconds: 60 },
  },
  {
    id: "oa-shared",
    provider: "oa",
    upstream_model: "gpt-up",
    ...CACHED,
    cache: { ttl_seconds: 60, namespace: "team" },
  },
];

type Door = "chat" | "messages" | "responses" | "gemini";

interface Ask {
  door?: Door;
  stream?: boolean;
  key?: string;
  model?: string;
  question?: string;
  headers?: Record<string, string>;
  temperature?: number;
  maxTokens?: number;
}

interface Answer {
  status: number;
  cache: string | null;
  text: string;
  usage: { input: number; output: number } | null;
  body: string;
  requestId: string | null;
}

/** Asks `gw` one question through a door and reads the answer's text and usage. */
async function ask(gw: Gateway, a: Ask = {}): Promise<Answer> {
  const door = a.door ?? "chat";
  const stream = a.stream ?? false;
  const question = a.question ?? "What is the capital of France?";
  const model = a.model ?? "oa-cached";
  const maxTokens = a.maxTokens ?? 50;
  const headers: Record<string, string> = { "content-type": "application/json", ...a.headers };
  if (a.key) headers.authorization = `Bearer ${a.key}`;
  let path: string;
  let body: Record<string, unknown>;
  if (door === "chat") {
    path = "/v1/chat/completions";
    body = { model, max_tokens: maxTokens, messages: [{ role: "user", content: question }] };
    if (stream) body.stream_options = { include_usage: true };
  } else if (door === "messages") {
    path = "/v1/messages";
    headers["anthropic-version"] = "2023-06-01";
    body = { model, max_tokens: maxTokens, messages: [{ role: "user", content: question }] };
  } else if (door === "responses") {
    path = "/v1/responses";
    body = { model, max_output_tokens: maxTokens, input: question, store: false };
  } else {
    path = `/v1beta/models/${model}:${
      stream ? "streamGenerateContent?alt=sse" : "generateContent"
    }`;
    if (a.key) headers["x-goog-api-key"] = a.key;
    delete headers.authorization;
    body = {
      contents: [{ role: "user", parts: [{ text: question }] }],
      generationConfig: { maxOutputTokens: maxTokens },
    };
  }
  if (stream && door !== "gemini") body.stream = true;
  if (a.temperature !== undefined) body.temperature = a.temperature;
  const geminiUsage = (json: { usageMetadata: Record<string, number> }) => ({
    input: json.usageMetadata.promptTokenCount!,
    output: json.usageMetadata.candidatesTokenCount!,
  });
  const geminiText = (json: { candidates: { content: { parts: { text?: string }[] } }[] }) =>
    json.candidates[0]!.content.parts.map((p) => p.text ?? "").join("");
  const res = await fetch(`${gw.server.url}${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  const raw = await res.text();
  const answer: Answer = {
    status: res.status,
    cache: res.headers.get("x-switchyard-cache"),
    text: "",
    usage: null,
    body: raw,
    requestId: res.headers.get("x-request-id"),
  };
  if (res.status !== 200) return answer;
  if (!stream) {
    const json = JSON.parse(raw);
    if (door === "chat") {
      answer.text = json.choices[0].message.content;
      answer.usage = { input: json.usage.prompt_tokens, output: json.usage.completion_tokens };
    } else if (door === "messages") {
      answer.text = json.content.map((c: { text?: string }) => c.text ?? "").join("");
      answer.usage = { input: json.usage.input_tokens, output: json.usage.output_tokens };
    } else if (door === "gemini") {
      answer.text = geminiText(json);
      answer.usage = geminiUsage(json);
    } else {
      answer.text = json.output.flatMap((o: { content?: { text: string }[] }) =>
        (o.content ?? []).map((c) => c.text)
      ).join("");
      answer.usage = { input: json.usage.input_tokens, output: json.usage.output_tokens };
    }
    return answer;
  }
  let input = 0;
  for (const event of sseData(raw)) {
    if (door === "chat") {
      answer.text += event.choices?.[0]?.delta?.content ?? "";
      if (event.usage) {
        answer.usage = { input: event.usage.prompt_tokens, output: event.usage.completion_tokens };
      }
    } else if (door === "messages") {
      if (event.type === "message_start") input = event.message.usage.input_tokens;
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        answer.text += event.delta.text;
      }
      if (event.type === "message_delta") {
        answer.usage = { input, output: event.usage.output_tokens };
      }
    } else if (door === "gemini") {
      answer.text += geminiText(event);
      if (event.usageMetadata?.candidatesTokenCount !== undefined) {
        answer.usage = geminiUsage(event);
      }
    } else {
      if (event.type === "response.output_text.delta") answer.text += event.delta;
      if (event.type === "response.completed") {
        const usage = event.response.usage;
        answer.usage = { input: usage.input_tokens, output: usage.output_tokens };
      }
    }
  }
  return answer;
}

// deno-lint-ignore no-explicit-any
function sseData(text: string): any[] {
  return text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)));
}

/** The `cache` field of an answer's log record. */
async function logged(gw: Gateway, answer: Answer): Promise<unknown> {
  return (await logRecord(gw.server, answer.requestId)).cache;
}

async function newKey(gw: Gateway, fields: { cache?: boolean | null } = {}): Promise<string> {
  const { key } = await gw.server.app.services.keys.create({ name: "cache-test", ...fields });
  return key;
}

/** A gateway with the cached models. */
function cacheGateway(): Promise<Gateway> {
  return startGateway({ models: MODELS });
}

Deno.test("a repeated question is answered from the cache without an upstream call, streamed and not, with the same content and usage", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const first = await ask(gw, { key });
  assert.equal(first.status, 200, first.body);
  assert.equal(first.cache, "miss");
  assert.equal(gw.openai.received.length, 1);
  assert.ok(first.text.length > 0);
  const again = await ask(gw, { key });
  assert.equal(again.cache, "hit");
  assert.equal(gw.openai.received.length, 1);
  assert.equal(again.text, first.text);
  assert.deepEqual(again.usage, first.usage);
  const streamed = await ask(gw, { key, stream: true });
  assert.equal(streamed.status, 200, streamed.body);
  assert.equal(streamed.cache, "hit");
  assert.equal(gw.openai.received.length, 1);
  assert.equal(streamed.text, first.text);
  assert.deepEqual(streamed.usage, first.usage);
  assert.deepEqual(
    await Promise.all([first, again, streamed].map((a) => logged(gw, a))),
    ["miss", "hit", "hit"],
  );
});

Deno.test("the same question through chat completions, Messages, Responses and Gemini, streamed or not, makes one upstream call", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const first = await ask(gw, { key, door: "chat", stream: true });
  assert.equal(first.status, 200, first.body);
  assert.equal(first.cache, "miss");
  for (const door of ["chat", "messages", "responses", "gemini"] as const) {
    for (const stream of [false, true]) {
      const a = await ask(gw, { key, door, stream });
      assert.equal(a.status, 200, a.body);
      assert.equal(a.cache, "hit", `${door} stream=${stream}`);
      assert.equal(a.text, first.text, `${door} stream=${stream}`);
      assert.deepEqual(a.usage, first.usage, `${door} stream=${stream}`);
    }
  }
  assert.equal(gw.openai.received.length, 1);
});

Deno.test("what changes the answer changes the entry: another question, temperature or max_tokens is a miss", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  assert.equal((await ask(gw, { key })).cache, "miss");
  assert.equal((await ask(gw, { key, question: "And of Spain?" })).cache, "miss");
  assert.equal((await ask(gw, { key, temperature: 0.2 })).cache, "miss");
  assert.equal((await ask(gw, { key, maxTokens: 40 })).cache, "miss");
  assert.equal((await ask(gw, { key, temperature: 0.2 })).cache, "hit");
  assert.equal(gw.openai.received.length, 4);
});

Deno.test("two keys never share an entry; a namespace shares one among every caller", async () => {
  await using gw = await cacheGateway();
  const a = await newKey(gw);
  const b = await newKey(gw);
  assert.equal((await ask(gw, { key: a })).cache, "miss");
  assert.equal((await ask(gw, { key: b })).cache, "miss");
  assert.equal((await ask(gw, { key: b })).cache, "hit");
  assert.equal(gw.openai.received.length, 2);
  // Anonymous callers are not cached without a namespace (the gateway cannot tell them apart).
  for (let i = 0; i < 2; i++) {
    const anonymous = await ask(gw, {});
    assert.equal(anonymous.cache, "miss");
    assert.equal(await logged(gw, anonymous), "bypass");
  }
  assert.equal(gw.openai.received.length, 4);
  // The operator's namespace: one scope for the model, keys and anonymous callers alike.
  assert.equal((await ask(gw, { key: a, model: "oa-shared" })).cache, "miss");
  assert.equal((await ask(gw, { key: b, model: "oa-shared" })).cache, "hit");
  assert.equal((await ask(gw, { model: "oa-shared" })).cache, "hit");
  assert.equal(gw.openai.received.length, 5);
});

Deno.test("a key can turn the cache off, or on for a model whose cache is not enabled", async () => {
  await using gw = await startGateway({
    models: [
      ...MODELS,
      {
        id: "oa-optin",
        provider: "oa",
        upstream_model: "gpt-up",
        ...CACHED,
        cache: { ttl_seconds: 60, enabled: false },
      },
    ],
  });
  const off = await newKey(gw, { cache: false });
  const on = await newKey(gw, { cache: true });
  const plain = await newKey(gw);
  assert.equal((await ask(gw, { key: off })).cache, "miss");
  assert.equal((await ask(gw, { key: off })).cache, "miss");
  assert.equal(gw.openai.received.length, 2);
  assert.equal((await ask(gw, { key: plain, model: "oa-optin" })).cache, "miss");
  assert.equal((await ask(gw, { key: plain, model: "oa-optin" })).cache, "miss");
  assert.equal((await ask(gw, { key: on, model: "oa-optin" })).cache, "miss");
  assert.equal((await ask(gw, { key: on, model: "oa-optin" })).cache, "hit");
  assert.equal(gw.openai.received.length, 5);
  // A model without a cache says nothing about one.
  const res = await ask(gw, { key: plain, model: "oa-chat" });
  assert.equal(res.status, 200);
  assert.equal(res.cache, null);
});

Deno.test("a cut stream, a stream that errs and an upstream error are not cached", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  gw.openai.faults = [
    { breakAfterEvents: 2 },
    { errorAfterEvents: 2, errorType: "server_error", message: "overloaded" },
    { status: 400, errorType: "invalid_request_error", message: "refused" },
  ];
  const cut = await ask(gw, { key, stream: true });
  assert.equal(cut.status, 200);
  const erred = await ask(gw, { key, stream: true });
  assert.equal(erred.status, 200);
  assert.notEqual((await ask(gw, { key })).status, 200);
  assert.equal(gw.openai.received.length, 3);
  const whole = await ask(gw, { key, stream: true });
  assert.equal(whole.cache, "miss");
  assert.equal(gw.openai.received.length, 4);
  const hit = await ask(gw, { key, stream: true });
  assert.equal(hit.cache, "hit");
  assert.equal(hit.text, whole.text);
  assert.equal(gw.openai.received.length, 4);
});

Deno.test("a client that leaves mid-stream leaves nothing in the cache", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  gw.openai.faults = [{ paceMs: 20 }];
  const res = await fetch(`${gw.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: "oa-cached",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "What is the capital of France?" }],
    }),
  });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
  await gw.openai.last.gone;
  assert.equal((await ask(gw, { key, stream: true })).cache, "miss");
  assert.equal(gw.openai.received.length, 2);
});

Deno.test("an entry expires after its time to live, the model's or the request's (x-switchyard-cache-ttl)", async () => {
  await using gw = await cacheGateway();
  const clock = gw.server.clock as FakeClock;
  const key = await newKey(gw);
  assert.equal((await ask(gw, { key })).cache, "miss");
  clock.advance(59_000);
  assert.equal((await ask(gw, { key })).cache, "hit");
  clock.advance(1_000);
  assert.equal((await ask(gw, { key })).cache, "miss");
  assert.equal(gw.openai.received.length, 2);
  // Stored with the request's 300 seconds: still there after the model's 60.
  const ttl = { "x-switchyard-cache-ttl": "300", "cache-control": "no-cache" };
  assert.equal((await ask(gw, { key, headers: ttl })).cache, "miss");
  clock.advance(299_000);
  assert.equal((await ask(gw, { key })).cache, "hit");
  clock.advance(1_000);
  assert.equal((await ask(gw, { key })).cache, "miss");
  assert.equal(gw.openai.received.length, 4);
});

Deno.test("a bad x-switchyard-cache-ttl is a 400 naming the header, in the door's error shape", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  for (const value of ["0", "601", "ten", "1.5", ""]) {
    const chat = await ask(gw, { key, headers: { "x-switchyard-cache-ttl": value } });
    assert.equal(chat.status, 400, value);
    const error = JSON.parse(chat.body).error;
    assert.equal(error.param, "x-switchyard-cache-ttl");
    assert.match(error.message, /x-switchyard-cache-ttl/);
  }
  const messages = await ask(gw, {
    key,
    door: "messages",
    headers: { "x-switchyard-cache-ttl": "-1" },
  });
  assert.equal(messages.status, 400);
  const body = JSON.parse(messages.body);
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "invalid_request_error");
  assert.match(body.error.message, /x-switchyard-cache-ttl/);
  assert.equal(gw.openai.received.length, 0);
});

Deno.test("Cache-Control: no-cache skips the lookup but stores; no-store neither looks nor stores", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const noStore = { "cache-control": "no-store" };
  const noCache = { "cache-control": "No-Cache" };
  assert.equal((await ask(gw, { key, headers: noStore })).cache, "miss");
  assert.equal((await ask(gw, { key })).cache, "miss"); // nothing was stored
  assert.equal((await ask(gw, { key, headers: noStore })).cache, "miss"); // nothing looked up
  assert.equal((await ask(gw, { key, headers: noCache, stream: true })).cache, "miss");
  assert.equal(gw.openai.received.length, 4);
  // What no-cache stored answers the next question.
  const q = "Another question";
  assert.equal((await ask(gw, { key, headers: noCache, question: q })).cache, "miss");
  assert.equal((await ask(gw, { key, question: q })).cache, "hit");
  assert.equal(gw.openai.received.length, 5);
});

Deno.test("a large answer (over KV's 64 KiB value limit) round-trips, streamed and not", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const words = Array.from({ length: 30_000 }, (_, i) => `w${i}`).join(" ");
  gw.openai.script = () => ({ text: words, toolCalls: [] });
  const first = await ask(gw, { key, maxTokens: 40_000 });
  assert.equal(first.status, 200, first.body.slice(0, 300));
  assert.equal(first.cache, "miss");
  assert.ok(new TextEncoder().encode(first.text).length > 64 * 1024, `${first.text.length}`);
  for (const door of ["chat", "messages", "responses"] as const) {
    for (const stream of [false, true]) {
      const again = await ask(gw, { key, maxTokens: 40_000, door, stream });
      assert.equal(again.cache, "hit", `${door} ${stream}`);
      assert.equal(again.text, first.text);
      assert.deepEqual(again.usage, first.usage);
    }
  }
  assert.equal(gw.openai.received.length, 1);
});

Deno.test("a hit's reasoning and tool calls are replayed whole (Messages door, Anthropic back end)", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const body = {
    model: "an-cached",
    max_tokens: 2000,
    thinking: { type: "enabled", budget_tokens: 1024 },
    tools: [{
      name: "get_weather",
      description: "Weather of a city",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
    }],
    messages: [{ role: "user", content: "What is the weather in Paris? use get_weather" }],
  };
  const call = async (stream: boolean) => {
    const res = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ ...body, stream }),
    });
    return { cache: res.headers.get("x-switchyard-cache"), text: await res.text() };
  };
  const first = await call(false);
  assert.equal(first.cache, "miss", first.text);
  const json = JSON.parse(first.text);
  assert.deepEqual(json.content.map((c: { type: string }) => c.type), ["thinking", "tool_use"]);
  const again = await call(false);
  assert.equal(again.cache, "hit");
  const replayed = JSON.parse(again.text);
  assert.deepEqual(replayed.content, json.content);
  assert.deepEqual(replayed.usage, json.usage);
  assert.equal(replayed.stop_reason, json.stop_reason);
  const streamed = await call(true);
  assert.equal(streamed.cache, "hit");
  const events = sseData(streamed.text);
  const toolStart = events.find((e) =>
    e.type === "content_block_start" && e.content_block.type === "tool_use"
  );
  assert.equal(toolStart.content_block.name, "get_weather");
  const delta = (type: string, field: string) =>
    events.filter((e) => e.delta?.type === type).map((e) => e.delta[field]).join("");
  assert.equal(delta("thinking_delta", "thinking"), json.content[0].thinking);
  assert.equal(delta("signature_delta", "signature"), json.content[0].signature);
  const args = events.filter((e) => e.delta?.type === "input_json_delta")
    .map((e) => e.delta.partial_json).join("");
  const used = json.content.find((c: { type: string }) => c.type === "tool_use");
  assert.deepEqual(JSON.parse(args), used.input);
  assert.equal(gw.anthropic.received.length, 1);
  // The other way round: a streamed miss, gathered as it passed, answers a whole hit.
  body.messages = [{ role: "user", content: "What is the weather in Rome? use get_weather" }];
  const streamedMiss = await call(true);
  assert.equal(streamedMiss.cache, "miss");
  const missEvents = sseData(streamedMiss.text);
  const whole = await call(false);
  assert.equal(whole.cache, "hit");
  const content = JSON.parse(whole.text).content;
  assert.equal(content[0].type, "thinking");
  const streamedDelta = (type: string, field: string) =>
    missEvents.filter((e) => e.delta?.type === type).map((e) => e.delta[field]).join("");
  assert.equal(content[0].thinking, streamedDelta("thinking_delta", "thinking"));
  assert.equal(content[0].signature, streamedDelta("signature_delta", "signature"));
  assert.ok(content[0].signature.length > 0);
  assert.deepEqual(content[1].input, JSON.parse(streamedDelta("input_json_delta", "partial_json")));
  assert.equal(gw.anthropic.received.length, 2);
});

Deno.test("a hit is free of the key's budget (unless the model's cache charges hits), and logged at no cost", async () => {
  const PRICE = { pricing: { input: 1000, output: 1000 } };
  await using gw = await startGateway({
    models: [
      { ...MODELS[0], ...PRICE },
      {
        id: "oa-charged",
        provider: "oa",
        upstream_model: "gpt-up",
        ...CACHED,
        ...PRICE,
        cache: { ttl_seconds: 60, charge_hits: true },
      },
    ],
  });
  for (const [model, charged] of [["oa-cached", false], ["oa-charged", true]] as const) {
    const { key, record } = await gw.server.app.services.keys.create({
      name: model,
      budget: { per_day: 100 },
    });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await ask(gw, { key, model }));
    assert.deepEqual(answers.map((a) => a.cache), ["miss", "hit", "hit", "hit"]);
    const usage = answers[0]!.usage!;
    const cost = (usage.input + usage.output) * 1000; // in millionths
    const records = await Promise.all(answers.map((a) => logRecord(gw.server, a.requestId)));
    assert.deepEqual(
      records.map((r) => r.cost),
      [cost, charged ? cost : 0, charged ? cost : 0, charged ? cost : 0].map((c) => c / 1e6),
    );
    // Reservations count until they settle, so the spend is the hits' share only once all did.
    const spent = charged ? 4 * cost : cost;
    await eventually(async () => {
      const entry = await gw.server.kv.get<number[]>(["spend", record.id]);
      return entry.value?.[1] === spent;
    }, `the spend of ${model} settled to ${spent}`);
  }
  assert.equal(gw.openai.received.length, 2);
});

Deno.test("a refusal is not stored unless the model's cache keeps refusals", async () => {
  await using gw = await startGateway({
    models: [...MODELS, {
      id: "an-keeps",
      provider: "an",
      upstream_model: "claude-up",
      ...CACHED,
      cache: { ttl_seconds: 60, store_refusals: true },
    }],
  });
  const anthropic = gw.anthropic as FakeAnthropic;
  const key = await newKey(gw);
  anthropic.turns = [{ stopReason: "refusal" }, { stopReason: "refusal" }];
  for (const expected of ["miss", "miss"]) {
    const refused = await ask(gw, { key, door: "messages", model: "an-cached" });
    assert.equal(JSON.parse(refused.body).stop_reason, "refusal");
    assert.equal(refused.cache, expected);
  }
  assert.equal(gw.anthropic.received.length, 2);
  anthropic.turns = [{ stopReason: "refusal" }];
  for (const expected of ["miss", "hit"]) {
    const refused = await ask(gw, { key, door: "messages", model: "an-keeps" });
    assert.equal(JSON.parse(refused.body).stop_reason, "refusal");
    assert.equal(refused.cache, expected);
  }
  assert.equal(gw.anthropic.received.length, 3);
});

Deno.test("semantic cache: a question worded alike gets the stored answer, only in the same scope, conversation and options", async () => {
  await using gw = await startGateway({
    models: [
      { id: "sim-embed", provider: "sim", embeddings: true },
      {
        id: "oa-semantic",
        provider: "oa",
        upstream_model: "gpt-up",
        ...CACHED,
        cache: { ttl_seconds: 60, semantic: { model: "sim-embed", threshold: 0.9 } },
      },
    ],
  });
  const key = await newKey(gw);
  const other = await newKey(gw);
  const model = "oa-semantic";
  const first = await ask(gw, { key, model, question: "What is the capital of France?" });
  assert.equal(first.cache, "miss");
  // The same words, other case and punctuation: the simulator's embeddings are bags of words.
  const alike = await ask(gw, {
    key,
    model,
    question: "what is the capital of france",
    stream: true,
  });
  assert.equal(alike.cache, "hit");
  assert.equal(alike.text, first.text);
  assert.equal(gw.openai.received.length, 1);
  // Another question, another key, other options: misses.
  assert.equal((await ask(gw, { key, model, question: "Tell me about dogs" })).cache, "miss");
  assert.equal(
    (await ask(gw, { key: other, model, question: "what is the capital of France" })).cache,
    "miss",
  );
  assert.equal(
    (await ask(gw, { key, model, question: "what is the capital of France", temperature: 0.3 }))
      .cache,
    "miss",
  );
  assert.equal(gw.openai.received.length, 4);
  // The same last turn after another conversation is not the same question.
  const res = await fetch(`${gw.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model,
      max_tokens: 50,
      messages: [
        { role: "user", content: "Let us talk about Texas." },
        { role: "assistant", content: "Sure." },
        { role: "user", content: "what is the capital of france" },
      ],
    }),
  });
  assert.equal(res.headers.get("x-switchyard-cache"), "miss");
  await res.body?.cancel();
  assert.equal(gw.openai.received.length, 5);
});

Deno.test("with guardrails before the cache: the key is the redacted question, the upstream never sees the e-mail, a hit is restored as the miss was", async () => {
  await using gw = await startGateway({
    models: [{
      id: "oa-guarded",
      provider: "oa",
      upstream_model: "gpt-up",
      ...CACHED,
      guardrails: [{ type: "pii", stage: "input", action: "redact", restore: true }],
      cache: { ttl_seconds: 60 },
    }],
  });
  // The fake repeats the question, so the answer holds the placeholder the guardrail restores.
  gw.openai.script = (c) => ({
    text: `You wrote: ${c.turns.at(-1)!.texts.join(" ")}`,
    toolCalls: [],
  });
  const key = await newKey(gw);
  const question = "Write to ada@example.com please";
  const first = await ask(gw, { key, model: "oa-guarded", question });
  assert.equal(first.cache, "miss", first.body);
  assert.match(first.text, /ada@example\.com/);
  assert.doesNotMatch(JSON.stringify(gw.openai.last.body), /ada@example\.com/);
  const again = await ask(gw, { key, model: "oa-guarded", question, stream: true });
  assert.equal(again.cache, "hit");
  assert.equal(again.text, first.text);
  assert.equal(gw.openai.received.length, 1);
});

Deno.test("a count of a cached model's prompt is not the cache's: Messages count_tokens still goes to the upstream's own count", async () => {
  await using gw = await cacheGateway();
  const key = await newKey(gw);
  const res = await fetch(`${gw.server.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({ model: "an-cached", messages: [{ role: "user", content: "hello" }] }),
  });
  assert.equal(res.status, 200);
  assert.ok((await res.json()).input_tokens > 0);
  assert.equal(res.headers.get("x-switchyard-cache"), null);
  assert.equal(gw.anthropic.last.path, "/v1/messages/count_tokens");
  const record = await logRecord(gw.server, res.headers.get("x-request-id"));
  assert.equal(record.cache, undefined);
});
