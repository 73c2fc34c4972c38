/**
 * `POST /v1/responses` end to end, with the official `openai` client as the caller, on every
 * back-end style (the simulator, an OpenAI-style upstream spoken to by chat completions, an
 * Anthropic-style upstream, and an upstream with the Responses API passed through): plain,
 * streamed (iterated and `responses.stream().finalResponse()`), function tools over two turns
 * (by `previous_response_id` and by replaying the whole input), structured output
 * (`responses.parse` with `zodTextFormat`), reasoning sent back in the second turn. Every
 * Response object and every stream event is validated against OpenAI's published schema, and
 * sequence numbers count up from 0. Then bad input, GET/DELETE and who may see what, and
 * `store: false`.
 */
import assert from "node:assert/strict";
import { zodTextFormat } from "npm:openai@7.55.0/helpers/zod";
import type {
  Response as OpenAIResponse,
  ResponseInputItem,
  ResponseStreamEvent,
} from "npm:openai@7.55.0/resources/responses/responses";
import { z } from "npm:zod@4.6.7";
import { OpenAISchemas } from "./api/responses/openapi_schema.ts";
import { type ResponsesGateway, startResponsesGateway, TARGETS } from "./api/responses/gateway.ts";
import { eventually } from "./support/eventually.ts";
import { structuredScript } from "./support/sdk_gateway.ts";

const schemas = await OpenAISchemas.load();

const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};
const ASK = "Call get_weather for Paris";

function assertResponse(response: unknown, what: string): void {
  assert.deepEqual(schemas.errors("Response", response), [], what);
}

/** Checks a stream's events against the schema and their order; returns them. */
function assertStream(events: ResponseStreamEvent[], what: string): ResponseStreamEvent[] {
  events.forEach((event, i) => {
    assert.deepEqual(schemas.eventErrors(event), [], `${what} event ${i} ${JSON.stringify(event)}`);
    assert.equal(event.sequence_number, i, `${what}: sequence numbers count from 0`);
  });
  assert.equal(events[0]?.type, "response.created", what);
  assert.equal(events[1]?.type, "response.in_progress", what);
  assert.equal(events.at(-1)?.type, "response.completed", what);
  return events;
}

function functionCalls(response: OpenAIResponse) {
  return response.output.flatMap((item) => item.type === "function_call" ? [item] : []);
}

Deno.test("responses.create on every back end: plain, streamed, stream().finalResponse()", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    const plain = await client.responses.create({
      model: target.model,
      input: "Hello there",
      instructions: "Be brief.",
      metadata: { run: "1" },
    });
    assertResponse(plain, `${target.name} plain`);
    assert.equal(plain.model, target.model);
    assert.equal(plain.status, "completed");
    assert.match(plain.id, /^resp_/);
    assert.ok(plain.output_text.length > 0, target.name);
    if (target.scripted) assert.equal(plain.output_text, "You said: Hello there");
    assert.ok(plain.usage!.input_tokens > 0 && plain.usage!.output_tokens > 0, target.name);

    const events: ResponseStreamEvent[] = [];
    const stream = await client.responses.create({
      model: target.model,
      input: "Hello there",
      stream: true,
    });
    for await (const event of stream) events.push(event);
    assertStream(events, `${target.name} stream`);
    for (const e of events) {
      if ("response" in e) assert.equal(e.response.model, target.model, "the gateway's model id");
    }
    const done = events.at(-1) as { response: OpenAIResponse };
    assertResponse(done.response, `${target.name} completed`);
    const deltas = events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : []);
    const text = done.response.output.flatMap((o) =>
      o.type === "message" ? o.content.flatMap((c) => c.type === "output_text" ? [c.text] : []) : []
    ).join("");
    assert.equal(deltas.join(""), text, `${target.name}: the deltas add up to the text`);

    const final = await client.responses.stream({ model: target.model, input: "Hello there" })
      .finalResponse();
    assert.ok(final.output_text.length > 0, target.name);
  }
});

Deno.test("function tools over two turns, by previous_response_id and by full input replay", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    for (const stream of [false, true]) {
      const what = `${target.name}${stream ? " streamed" : ""}`;
      const first = stream
        ? await client.responses.stream({ model: target.model, input: ASK, tools: [WEATHER] })
          .finalResponse()
        : await client.responses.create({ model: target.model, input: ASK, tools: [WEATHER] });
      assertResponse(first, what);
      const [call] = functionCalls(first);
      assert.ok(call, `${what}: a function call`);
      assert.equal(call.name, "get_weather");
      if (target.scripted) assert.deepEqual(JSON.parse(call.arguments), { city: "Paris" });
      const output: ResponseInputItem = {
        type: "function_call_output",
        call_id: call.call_id,
        output: "18C and sunny",
      };

      const byId = await client.responses.create({
        model: target.model,
        previous_response_id: first.id,
        input: [output],
        tools: [WEATHER],
      });
      assertResponse(byId, what);
      assert.equal(byId.previous_response_id, first.id);
      assert.equal(functionCalls(byId).length, 0, what);
      if (target.scripted) assert.equal(byId.output_text, "Tool results: 18C and sunny", what);
      else assert.ok(byId.output_text.length > 0);

      const replay = await client.responses.create({
        model: target.model,
        store: false,
        input: [
          { role: "user", content: ASK },
          ...first.output as ResponseInputItem[],
          output,
        ],
        tools: [WEATHER],
      });
      assertResponse(replay, what);
      if (target.scripted) assert.equal(replay.output_text, "Tool results: 18C and sunny", what);
    }
  }
  assert.deepEqual(gw.openai.violations, []);
  assert.deepEqual(gw.anthropic.violations, []);
  assert.deepEqual(gw.responses.violations, []);
});

const Recipe = z.object({ title: z.string(), servings: z.number() });

Deno.test("text.format json_schema: responses.parse with zodTextFormat", async () => {
  await using gw = await startResponsesGateway();
  const recipe = { title: "Pancakes", servings: 4 };
  gw.openai.script = structuredScript(gw.openai, recipe);
  gw.anthropic.script = structuredScript(gw.anthropic, recipe);
  gw.responses.script = () => ({ text: JSON.stringify(recipe), toolCalls: [] });
  const client = gw.client();
  for (const target of TARGETS) {
    const parsed = await client.responses.parse({
      model: target.model,
      input: "A recipe, please.",
      text: { format: zodTextFormat(Recipe, "recipe") },
    });
    assertResponse(parsed, target.name);
    assert.ok(parsed.output_parsed, target.name);
    Recipe.parse(parsed.output_parsed);
    if (target.scripted) assert.deepEqual(parsed.output_parsed, recipe, target.name);
  }
});

Deno.test("reasoning with a summary, its item sent back in turn two", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    for (const stream of [false, true]) {
      const what = `${target.name}${stream ? " streamed" : ""}`;
      const request = {
        model: target.model,
        input: ASK,
        tools: [WEATHER],
        reasoning: { effort: "low" as const, summary: "auto" as const },
        include: ["reasoning.encrypted_content" as const],
        store: false,
      };
      let first: OpenAIResponse;
      if (stream) {
        const events: ResponseStreamEvent[] = [];
        for await (const e of await client.responses.create({ ...request, stream: true })) {
          events.push(e);
        }
        assertStream(events, what);
        const types = new Set(events.map((e) => e.type));
        if (target.name !== "openai") {
          for (
            const type of [
              "response.reasoning_summary_part.added",
              "response.reasoning_summary_text.delta",
              "response.reasoning_summary_text.done",
              "response.reasoning_summary_part.done",
            ]
          ) assert.ok(types.has(type as ResponseStreamEvent["type"]), `${what}: ${type}`);
        }
        first = (events.at(-1) as { response: OpenAIResponse }).response;
      } else {
        first = await client.responses.create(request);
      }
      assertResponse(first, what);
      const reasoning = first.output.find((o) => o.type === "reasoning");
      if (target.name !== "openai") {
        assert.ok(reasoning, `${what}: a reasoning item`);
        assert.ok(reasoning.summary[0]!.text.length > 0, what);
        assert.ok(reasoning.encrypted_content, what);
      }
      const [call] = functionCalls(first);
      assert.ok(call, what);
      const second = await client.responses.create({
        ...request,
        input: [
          { role: "user", content: ASK },
          ...first.output as ResponseInputItem[],
          { type: "function_call_output", call_id: call.call_id, output: "18C and sunny" },
        ],
      });
      assertResponse(second, what);
      if (target.scripted) assert.equal(second.output_text, "Tool results: 18C and sunny", what);
    }
  }
  // The Anthropic fake checks each thinking block's signature, and that a tool loop's last
  // assistant turn starts with thinking: the reasoning came back to it byte for byte.
  assert.deepEqual(gw.anthropic.violations, []);
  const sent = gw.anthropic.last.body as { messages: { content: { type: string }[] }[] };
  assert.equal(sent.messages[1]!.content[0]!.type, "thinking");
  // The passthrough gave the upstream its own encrypted content back unchanged.
  assert.deepEqual(gw.responses.violations, []);
  const input =
    (gw.responses.last.body as { input: { type: string; encrypted_content?: string }[] })
      .input;
  assert.match(input.find((i) => i.type === "reasoning")!.encrypted_content!, /^gAAAAAfake/);
});

async function postRaw(gw: ResponsesGateway, body: unknown, key: string | null = gw.apiKey) {
  const res = await fetch(`${gw.baseURL}/responses`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("bad input: OpenAI's error object naming the field", async () => {
  await using gw = await startResponsesGateway();
  const cases: [unknown, string][] = [
    [{ input: "hi" }, "model"],
    [{ model: "sim-vision" }, "input"],
    [{ model: "sim-vision", input: 3 }, "input"],
    [{
      model: "sim-vision",
      input: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, {
        role: "user",
        content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }],
      }],
    }, "input[2].content[0].image_url"],
    [{ model: "sim-vision", input: [{ role: "wizard", content: "x" }] }, "input[0].role"],
    [{ model: "sim-vision", input: "x", temperature: 3 }, "temperature"],
    [{
      model: "sim-vision",
      input: "x",
      tools: [{ type: "namespace", name: "crm", description: "CRM", tools: [] }],
    }, "tools[0].tools"],
    [
      { model: "sim-vision", input: "x", text: { format: { type: "json_schema" } } },
      "text.format.name",
    ],
    [{ model: "sim-vision", input: "x", tool_choice: "required" }, "tool_choice"],
    [{
      model: "sim-vision",
      input: [{ type: "function_call_output", call_id: "nope", output: "x" }],
    }, "input[0].call_id"],
    [{
      model: "sim-vision",
      input: [{ type: "reasoning", summary: [], encrypted_content: "swy1.!!!" }],
    }, "input[0].encrypted_content"],
    [
      { model: "sim-vision", input: "x", previous_response_id: "resp_unknown" },
      "previous_response_id",
    ],
    [{ model: "sim-chat", input: "x", tools: [WEATHER] }, "tools"],
    [{
      model: "sim-chat",
      input: [{
        role: "user",
        content: [{ type: "input_image", image_url: "https://example.com/cat.png" }],
      }],
    }, "input[0].content[0]"],
    [{
      model: "sim-chat",
      input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }],
    }, "input[0]"],
    [
      { model: "sim-vision", input: "x", stream_options: { include_obfuscation: false } },
      "stream_options",
    ],
    [{ model: "sim-vision", input: [null] }, "input[0]"],
  ];
  for (const [body, param] of cases) {
    const { status, body: answer } = await postRaw(gw, body);
    assert.ok(status === 400 || status === 404, `${param}: ${status} ${JSON.stringify(answer)}`);
    assert.equal(answer.error.param, param, JSON.stringify(answer));
    assert.equal(typeof answer.error.message, "string");
    assert.equal(typeof answer.error.type, "string");
  }
});

Deno.test("GET and DELETE: only the key that made a response sees it; store:false keeps nothing", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  const other = gw.client(await gw.newKey());
  const anonymous = gw.client(null);
  for (const target of TARGETS) {
    const made = await client.responses.create({ model: target.model, input: "Hello there" });
    const got = await client.responses.retrieve(made.id);
    assertResponse(got, target.name);
    assert.deepEqual(got.output, made.output);
    const items = await client.responses.inputItems.list(made.id);
    assert.equal(items.data.length, 1);
    await assert.rejects(() => other.responses.retrieve(made.id), { status: 404 });
    await assert.rejects(() => anonymous.responses.retrieve(made.id), { status: 404 });
    await assert.rejects(
      () =>
        other.responses.create({ model: target.model, input: "x", previous_response_id: made.id }),
      { status: 404 },
    );
    await assert.rejects(() => other.responses.delete(made.id), { status: 404 });
    const res = await fetch(`${gw.baseURL}/responses/${made.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${gw.apiKey}` },
    });
    assert.deepEqual(await res.json(), { id: made.id, object: "response.deleted", deleted: true });
    await assert.rejects(() => client.responses.retrieve(made.id), { status: 404 });
  }
  const mine = await anonymous.responses.create({ model: "sim-vision", input: "Hello" });
  assert.equal((await anonymous.responses.retrieve(mine.id)).id, mine.id);
  await assert.rejects(() => client.responses.retrieve(mine.id), { status: 404 });

  const count = async () => {
    let n = 0;
    for await (const _ of gw.server.kv.list({ prefix: ["responses"] })) n++;
    return n;
  };
  const before = await count();
  for (const target of TARGETS) {
    const r = await client.responses.create({ model: target.model, input: "Hi", store: false });
    await assert.rejects(() => client.responses.retrieve(r.id), { status: 404 });
    const events = [];
    for await (
      const e of await client.responses.create({
        model: target.model,
        input: "Hi",
        store: false,
        stream: true,
      })
    ) events.push(e);
  }
  assert.equal(await count(), before);
});

/** A streamed request over raw fetch: the events (`event:` checked against the data's type). */
async function streamRaw(gw: ResponsesGateway, body: Record<string, unknown>) {
  const res = await fetch(`${gw.baseURL}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gw.apiKey}` },
    body: JSON.stringify({ ...body, stream: true }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  return text.split("\n\n").filter((b) => b.trim() !== "").map((block) => {
    const event = block.split("\n").find((l) => l.startsWith("event: "))!.slice(7);
    const data = JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
    assert.equal(data.type, event);
    return data as ResponseStreamEvent;
  });
}

Deno.test("a back end failing mid-stream ends the stream with response.failed", async () => {
  await using gw = await startResponsesGateway();
  for (const fake of [gw.openai, gw.anthropic]) {
    fake.faults.push({ errorAfterEvents: 3 });
    const model = fake === gw.openai ? "oa-chat" : "an-chat";
    const events = await streamRaw(gw, { model, input: "Tell me a long story please" });
    events.forEach((event, i) => {
      assert.deepEqual(schemas.eventErrors(event), [], `${model} event ${i}`);
      assert.equal(event.sequence_number, i);
    });
    const last = events.at(-1)!;
    assert.equal(last.type, "response.failed", model);
    if (last.type === "response.failed") {
      assert.equal(last.response.status, "failed");
      assert.equal(last.response.error?.code, "server_error");
    }
  }
  // Through the passthrough, the upstream's own error event arrives as it sent it.
  gw.responses.faults.push({ errorAfterEvents: 3 });
  const events = await streamRaw(gw, { model: "oa-resp", input: "Hello" });
  assert.equal(events.at(-1)!.type, "error");
});

Deno.test("a client that leaves mid-stream aborts the upstream call", async () => {
  await using gw = await startResponsesGateway();
  for (const [fake, model] of [[gw.openai, "oa-chat"], [gw.responses, "oa-resp"]] as const) {
    fake.faults.push({ paceMs: 200 });
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gw.apiKey}` },
      body: JSON.stringify({ model, input: "one two three four five six", stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
    assert.ok(await fake.last.gone, model);
  }
});

Deno.test("continuing on another provider drops reasoning it cannot check, and says so", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  const first = await client.responses.create({
    model: "an-chat",
    input: ASK,
    tools: [WEATHER],
    reasoning: { effort: "low" },
  });
  const [call] = functionCalls(first);
  const next = {
    previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: call!.call_id, output: "18C and sunny" }],
    tools: [WEATHER],
  };
  const continuations = [["oa-chat", "reasoning_content"], ["oa-resp", "input.reasoning"]] as const;
  for (const [model, dropped] of continuations) {
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gw.apiKey}` },
      body: JSON.stringify({ model, ...next }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.output_text ?? body.output[0].content[0].text, "Tool results: 18C and sunny");
    assert.ok(res.headers.get("x-switchyard-dropped-params")?.split(",").includes(dropped), model);
  }
  // The passthrough sent the whole conversation instead of an id its upstream does not know,
  // with the upstream's model id, and no reasoning from another provider.
  const sent = gw.responses.last.body as Record<string, unknown>;
  assert.equal(sent.model, "gpt-resp-up");
  assert.equal(sent.previous_response_id, undefined);
  const types = (sent.input as { type?: string }[]).map((i) => i.type ?? "message");
  assert.deepEqual(types, ["message", "function_call", "function_call_output"]);
  assert.deepEqual(gw.responses.violations, []);
  assert.deepEqual(gw.openai.violations, []);
});

Deno.test("usage reaches the request log on every path", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    await client.responses.create({ model: target.model, input: "Hello there" });
    await client.responses.stream({ model: target.model, input: "Hello there" }).finalResponse();
  }
  const records = await eventually(() => {
    const found = gw.server.output.records().filter((r) => r.path === "/v1/responses");
    return found.length === TARGETS.length * 2 ? found : undefined;
  }, "a record per call");
  for (const r of records) {
    assert.equal(r.status, 200);
    assert.ok(
      (r.prompt_tokens as number) > 0 && (r.completion_tokens as number) > 0,
      JSON.stringify(r),
    );
  }
});

Deno.test("fields the gateway does not model go to a Responses upstream, elsewhere are named", async () => {
  await using gw = await startResponsesGateway();
  for (const target of TARGETS) {
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gw.apiKey}` },
      body: JSON.stringify({
        model: target.model,
        input: "Hello there",
        prompt_cache_key: "k1",
        safety_identifier: "u1",
      }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assertResponse(body, target.name);
    const dropped = res.headers.get("x-switchyard-dropped-params");
    if (target.name === "passthrough") {
      assert.equal(dropped, null);
      const sent = gw.responses.last.body as Record<string, unknown>;
      assert.equal(sent.prompt_cache_key, "k1");
      assert.equal(sent.safety_identifier, "u1");
    } else if (target.name !== "simulator") {
      assert.equal(dropped, "prompt_cache_key,safety_identifier", target.name);
    }
  }
});

Deno.test("an id too long to be a stored one is not found (404), on every route that takes one", async () => {
  await using gw = await startResponsesGateway();
  const id = "resp_" + "a".repeat(2100);
  const headers = { "content-type": "application/json", authorization: `Bearer ${gw.apiKey}` };
  const calls: [string, string, string, unknown][] = [
    ["POST", "", "previous_response_id", {
      model: "sim-chat",
      input: "hi",
      previous_response_id: id,
    }],
    ["POST", "", "previous_response_id", {
      model: "oa-resp",
      input: "hi",
      previous_response_id: id,
    }],
    ["GET", `/${id}`, "response_id", undefined],
    ["DELETE", `/${id}`, "response_id", undefined],
    ["GET", `/${id}/input_items`, "response_id", undefined],
  ];
  for (const [method, path, param, body] of calls) {
    const res = await fetch(`${gw.baseURL}/responses${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
    const answer = await res.json();
    assert.equal(res.status, 404, `${method} ${param}: ${JSON.stringify(answer)}`);
    assert.equal(answer.error.code, "response_not_found");
    assert.equal(answer.error.param, param);
  }
});

Deno.test("a previous response's function call must be answered; an empty input continues only", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS.filter((t) => t.name !== "passthrough")) {
    const first = await client.responses.create({
      model: target.model,
      input: ASK,
      tools: [WEATHER],
    });
    const [call] = functionCalls(first);
    assert.ok(call, target.name);
    for (const input of ["Never mind", [], [{ role: "user" as const, content: "Never mind" }]]) {
      const { status, body } = await postRaw(gw, {
        model: target.model,
        previous_response_id: first.id,
        input,
        tools: [WEATHER],
      });
      assert.equal(status, 400, `${target.name} ${JSON.stringify(input)}`);
      assert.equal(body.error.param, "input");
      assert.equal(body.error.code, "invalid_value");
      assert.match(
        body.error.message,
        new RegExp(`no tool output found for function call "${call.call_id}"`),
      );
    }
    // A call of the input itself that no output answers is named by its path.
    const { status, body } = await postRaw(gw, {
      model: target.model,
      input: [
        { role: "user", content: ASK },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
      ],
      tools: [WEATHER],
    });
    assert.equal(status, 400, target.name);
    assert.equal(body.error.param, "input[1].call_id");

    // An empty input continues a previous response that ended in a message.
    const answered = await client.responses.create({
      model: target.model,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "18C and sunny" }],
      tools: [WEATHER],
    });
    const more = await postRaw(gw, {
      model: target.model,
      previous_response_id: answered.id,
      input: [],
    });
    assert.equal(more.status, 200, `${target.name}: ${JSON.stringify(more.body)}`);
  }
  const empty = await postRaw(gw, { model: "sim-vision", input: [] });
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.param, "input");
  assert.equal(empty.body.error.code, "invalid_value");
});

Deno.test("a function call cut short by max_output_tokens is incomplete, streamed or not", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  const request = { model: "sim-vision", input: ASK, tools: [WEATHER], max_output_tokens: 2 };
  const plain = await client.responses.create(request);
  assertResponse(plain, "plain");
  const events = [];
  for await (const e of await client.responses.create({ ...request, stream: true })) events.push(e);
  const done = events.flatMap((e) => e.type === "response.output_item.done" ? [e.item] : []);
  const final = events.at(-1)!;
  assert.equal(final.type, "response.incomplete");
  const streamed = (final as { response: OpenAIResponse }).response;
  assertResponse(streamed, "streamed");
  for (const [what, response] of [["plain", plain], ["streamed", streamed]] as const) {
    assert.equal(response.status, "incomplete", what);
    assert.deepEqual(response.incomplete_details, { reason: "max_output_tokens" });
    const [call] = functionCalls(response);
    assert.ok(call, what);
    assert.equal(call.status, "incomplete", what);
  }
  assert.deepEqual(done.map((item) => item.type === "function_call" && item.status), [
    "incomplete",
  ]);
  assert.deepEqual(done, streamed.output);
});
