/**
 * The Responses API as Codex CLI uses it, end to end with the official `openai` client, on
 * every back-end style of the Responses gateway (the simulator, an OpenAI-style upstream
 * spoken to by chat completions, an Anthropic-style upstream, and a Responses upstream passed
 * through): a real Codex request body (its `namespace` tool, the hosted `web_search` tool,
 * `client_metadata`, `prompt_cache_key`, `store: false`, `include`) is answered, the hosted tool
 * left out and named in `x-switchyard-dropped-params` where the back end cannot run it; a call
 * of a namespaced tool comes back under its namespace and a custom tool's as a
 * `custom_tool_call`, and each is answered in the next turn by replaying the whole input (as
 * Codex does, without `previous_response_id`). Every Response and event is checked against
 * OpenAI's published schema.
 */
import assert from "node:assert/strict";
import type {
  Response as OpenAIResponse,
  ResponseInputItem,
  ResponseStreamEvent,
} from "npm:openai@7.55.0/resources/responses/responses";
import { OpenAISchemas } from "./api/responses/openapi_schema.ts";
import { startResponsesGateway, TARGETS } from "./api/responses/gateway.ts";
import { startGateway } from "./support/gateway.ts";

const schemas = await OpenAISchemas.load();
const CODEX_BODY = JSON.parse(
  await Deno.readTextFile(
    new URL("./api/responses/fixtures/codex_0.171.0_request.json", import.meta.url),
  ),
) as Record<string, unknown>;

/** Codex's kinds of tools, small. */
const TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command.",
    strict: false,
    parameters: {
      type: "object",
      properties: { cmd: { type: "string" } },
      required: ["cmd"],
      additionalProperties: false,
    },
  },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Tools for spawning and managing sub-agents.",
    tools: [{
      type: "function",
      name: "spawn_agent",
      description: "Spawn a sub-agent.",
      strict: false,
      parameters: {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
        additionalProperties: false,
      },
    }],
  },
  { type: "custom", name: "apply_patch", description: "Edits files.", format: { type: "text" } },
  { type: "web_search", external_web_access: true },
];

/** What Codex sends besides the tools and the input. */
const CODEX_FIELDS = {
  tool_choice: "auto",
  parallel_tool_calls: true,
  reasoning: { summary: "auto" },
  store: false,
  stream: true,
  include: ["reasoning.encrypted_content"],
  prompt_cache_key: "0b1c2d3e-session",
  client_metadata: { session_id: "0b1c2d3e-session" },
};

/** The text of a Response's messages (the SDK adds `output_text` only to what it assembles). */
function textOf(response: OpenAIResponse): string {
  return response.output.flatMap((item) =>
    item.type === "message"
      ? item.content.flatMap((part) => part.type === "output_text" ? [part.text] : [])
      : []
  ).join("");
}

/** Streams a request given as raw JSON; the final Response, the events and the headers. */
async function streamed(
  client: ReturnType<Awaited<ReturnType<typeof startResponsesGateway>>["client"]>,
  body: Record<string, unknown>,
  what: string,
): Promise<{ final: OpenAIResponse; events: ResponseStreamEvent[]; headers: Headers }> {
  // deno-lint-ignore no-explicit-any
  const { data, response } = await client.responses.create(body as any).withResponse();
  const events: ResponseStreamEvent[] = [];
  for await (const event of data as unknown as AsyncIterable<ResponseStreamEvent>) {
    events.push(event);
  }
  events.forEach((event, i) => {
    assert.deepEqual(schemas.eventErrors(event), [], `${what} event ${i} ${JSON.stringify(event)}`);
    assert.equal(event.sequence_number, i, what);
  });
  const last = events.at(-1)!;
  assert.equal(last.type, "response.completed", what);
  const final = (last as { response: OpenAIResponse }).response;
  assert.deepEqual(schemas.errors("Response", final), [], what);
  return { final, events, headers: response.headers };
}

Deno.test("Codex's own request body is answered on every back end; hosted tools left out and named", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    const body = { ...CODEX_BODY, model: target.model };
    const { final, headers } = await streamed(client, body, target.name);
    assert.ok(textOf(final).length > 0, target.name);
    assert.equal((final as unknown as { store: boolean }).store, false);
    const dropped = headers.get("x-switchyard-dropped-params")?.split(",") ?? [];
    if (target.name === "passthrough") {
      // A Responses upstream gets the body as sent: it runs the hosted tool itself.
      const sent = gw.responses.last.body as Record<string, unknown>;
      assert.deepEqual(sent.tools, CODEX_BODY.tools);
      assert.deepEqual(sent.client_metadata, CODEX_BODY.client_metadata);
      assert.deepEqual(dropped, []);
    } else {
      assert.ok(dropped.includes("tools.web_search"), `${target.name}: ${dropped}`);
    }
    if (target.name === "openai" || target.name === "anthropic") {
      for (const name of ["client_metadata", "prompt_cache_key"]) {
        assert.ok(dropped.includes(name), `${target.name}: ${name} in ${dropped}`);
      }
    }
    if (target.name === "openai") {
      // The namespace's tools reach a chat completions upstream as functions.
      const sent = gw.openai.last.body as { tools: { function: { name: string } }[] };
      const names = sent.tools.map((t) => t.function.name);
      assert.ok(names.includes("multi_agent_v1__spawn_agent"), names.join());
      assert.ok(names.includes("exec_command"));
      assert.ok(!names.some((n) => n.includes("web_search")));
    }
  }
});

Deno.test("a namespaced tool's call comes back under its namespace and is answered by replaying the input", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS.filter((t) => t.name !== "passthrough")) {
    const ask: ResponseInputItem = {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Use multi_agent_v1__spawn_agent with message=hello" }],
    };
    const first = await streamed(client, {
      model: target.model,
      input: [ask],
      tools: TOOLS,
      ...CODEX_FIELDS,
    }, target.name);
    const call = first.final.output.find((item) => item.type === "function_call");
    assert.ok(
      call && call.type === "function_call",
      `${target.name}: ${JSON.stringify(first.final.output)}`,
    );
    assert.equal(call.name, "spawn_agent");
    assert.equal((call as { namespace?: string }).namespace, "multi_agent_v1");
    const added = first.events.find((e) => e.type === "response.output_item.added");
    assert.equal((added as { item: { namespace?: string } }).item.namespace, "multi_agent_v1");

    const second = await streamed(client, {
      model: target.model,
      input: [
        ask,
        ...first.final.output,
        { type: "function_call_output", call_id: call.call_id, output: "agent spawned" },
      ],
      tools: TOOLS,
      ...CODEX_FIELDS,
    }, `${target.name} second turn`);
    assert.ok(!second.final.output.some((item) => item.type === "function_call"), target.name);
    if (target.scripted) assert.equal(textOf(second.final), "Tool results: agent spawned");
    else assert.match(textOf(second.final), /agent spawned/);
  }
});

Deno.test("a custom tool's call comes back as a custom_tool_call, answered by custom_tool_call_output", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS.filter((t) => t.name !== "passthrough")) {
    for (const stream of [true, false]) {
      const what = `${target.name}${stream ? " streamed" : ""}`;
      const ask: ResponseInputItem = {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: 'Use apply_patch with input="*** Begin Patch"' }],
      };
      const body = { model: target.model, input: [ask], tools: TOOLS, ...CODEX_FIELDS, stream };
      const first = stream
        ? (await streamed(client, body, what)).final
        // deno-lint-ignore no-explicit-any
        : await client.responses.create(body as any) as OpenAIResponse;
      assert.deepEqual(schemas.errors("Response", first), [], what);
      const call = first.output.find((item) => item.type === "custom_tool_call");
      assert.ok(
        call && call.type === "custom_tool_call",
        `${what}: ${JSON.stringify(first.output)}`,
      );
      assert.equal(call.name, "apply_patch");
      assert.equal(call.input, target.scripted ? "x" : "*** Begin Patch", what);
      assert.match(call.id!, /^ctc_/);

      const second = await streamed(client, {
        ...body,
        stream: true,
        input: [
          ask,
          ...first.output,
          { type: "custom_tool_call_output", call_id: call.call_id, output: "patched" },
        ],
      }, `${what} second turn`);
      if (target.scripted) assert.equal(textOf(second.final), "Tool results: patched", what);
      else assert.match(textOf(second.final), /patched/);
    }
  }
});

Deno.test("reasoning round-trips in Codex's tool loop (store false, the whole input replayed) on Anthropic- and Gemini-style back ends", async () => {
  await using gw = await startGateway();
  for (const model of ["an-chat", "ge-chat"]) {
    const ask = { type: "message", role: "user", content: "Use multi_agent_v1__spawn_agent" };
    const request = {
      model,
      tools: TOOLS,
      ...CODEX_FIELDS,
      stream: false,
      reasoning: { effort: "low", summary: "auto" },
    };
    const post = async (input: unknown[]) => {
      const res = await fetch(`${gw.server.url}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...request, input }),
      });
      const body = await res.json();
      assert.equal(res.status, 200, `${model}: ${JSON.stringify(body)}`);
      assert.deepEqual(schemas.errors("Response", body), [], model);
      return body as OpenAIResponse;
    };
    const first = await post([ask]);
    const reasoning = first.output.find((item) => item.type === "reasoning");
    assert.ok(reasoning?.encrypted_content, `${model}: ${JSON.stringify(first.output)}`);
    const call = first.output.find((item) => item.type === "function_call");
    assert.ok(call && call.type === "function_call", model);
    assert.equal((call as { namespace?: string }).namespace, "multi_agent_v1");
    const second = await post([
      ask,
      ...first.output,
      { type: "function_call_output", call_id: call.call_id, output: "agent spawned" },
    ]);
    assert.equal(textOf(second), "Tool results: agent spawned", model);
  }
  // Each fake checks what came back: Anthropic's thinking signatures byte for byte, Gemini's
  // thought signature on the call of the current turn.
  assert.deepEqual(gw.anthropic.violations, []);
  assert.deepEqual(gw.gemini.violations, []);
  const sent = gw.anthropic.last.body as { messages: { content: { type: string }[] }[] };
  assert.equal(sent.messages[1]!.content[0]!.type, "thinking");
});
