import assert from "node:assert/strict";
import { parseResponsesRequest } from "../../../src/api/responses/request.ts";
import { ApiError } from "../../../src/errors.ts";

function paramOf(body: Record<string, unknown>): string | null {
  try {
    parseResponsesRequest(body);
  } catch (e) {
    if (e instanceof ApiError) return e.param;
    throw e;
  }
  throw new Error("accepted");
}

Deno.test("a minimal body: OpenAI's defaults, echoed as a Response shows them", () => {
  const req = parseResponsesRequest({ model: "m", input: "hi" });
  assert.equal(req.store, true);
  assert.equal(req.stream, false);
  assert.equal(req.previousResponseId, null);
  assert.equal(req.includeEncrypted, false);
  assert.deepEqual(req.options.tools, []);
  assert.equal(req.options.maxTokensGiven, false);
  assert.deepEqual(req.echo, {
    instructions: null,
    tools: [],
    tool_choice: "auto",
    temperature: 1,
    top_p: 1,
    max_output_tokens: null,
    parallel_tool_calls: true,
    reasoning: { effort: null, summary: null },
    text: { format: { type: "text" } },
    metadata: {},
    truncation: "disabled",
    user: null,
  });
});

Deno.test("options become canonical; unknown fields are extras of openai_responses", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: "hi",
    instructions: "Be brief.",
    max_output_tokens: 99,
    temperature: 0.5,
    top_p: 0.9,
    parallel_tool_calls: false,
    reasoning: { effort: "xhigh", summary: "detailed" },
    text: {
      format: { type: "json_schema", name: "r", schema: { type: "object" }, strict: true },
    },
    tools: [
      { type: "function", name: "f", parameters: { type: "object" }, strict: true },
      { type: "web_search" },
    ],
    tool_choice: { type: "function", name: "f" },
    include: ["reasoning.encrypted_content"],
    store: false,
    stream: true,
    previous_response_id: "resp_1",
    service_tier: "flex",
    prompt_cache_key: "k",
    truncation: "auto",
  });
  assert.equal(req.instructions, "Be brief.");
  assert.equal(req.options.maxTokens, 99);
  assert.equal(req.options.maxTokensGiven, true);
  assert.equal(req.options.temperature, 0.5);
  assert.equal(req.options.topP, 0.9);
  assert.equal(req.options.parallelToolCalls, false);
  assert.deepEqual(req.options.reasoning, { effort: "high" });
  assert.deepEqual(req.options.output, {
    type: "json_schema",
    name: "r",
    schema: { type: "object" },
    strict: true,
  });
  assert.deepEqual(req.options.tools, [{
    name: "f",
    parameters: { type: "object" },
    strict: true,
  }]);
  assert.deepEqual(req.options.toolChoice, { name: "f" });
  assert.deepEqual(req.hostedTools, [{ path: "tools[1].type", type: "web_search" }]);
  assert.equal(req.includeEncrypted, true);
  assert.equal(req.store, false);
  assert.equal(req.stream, true);
  assert.equal(req.previousResponseId, "resp_1");
  assert.deepEqual(req.extras, { service_tier: "flex", prompt_cache_key: "k" });
  assert.equal(req.echo.truncation, "auto");
  assert.deepEqual(req.echo.reasoning, { effort: "xhigh", summary: "detailed" });
});

Deno.test("effort none turns reasoning off", () => {
  const req = parseResponsesRequest({ model: "m", input: "x", reasoning: { effort: "none" } });
  assert.deepEqual(req.options.reasoning, { disabled: true });
});

Deno.test("bad fields are named by their path", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ input: "x" }, "model"],
    [{ model: "m" }, "input"],
    [{ model: "m", input: "x", max_output_tokens: 0 }, "max_output_tokens"],
    [{ model: "m", input: "x", top_p: 2 }, "top_p"],
    [{ model: "m", input: "x", reasoning: { effort: "huge" } }, "reasoning.effort"],
    [{ model: "m", input: "x", text: { format: { type: "xml" } } }, "text.format.type"],
    [{ model: "m", input: "x", tools: [{ type: "function", name: "a b" }] }, "tools[0].name"],
    [{
      model: "m",
      input: "x",
      tools: [{ type: "function", name: "a" }, { type: "function", name: "a" }],
    }, "tools[1].name"],
    [{ model: "m", input: "x", tool_choice: { type: "function", name: "zz" } }, "tool_choice.name"],
    [{ model: "m", input: "x", include: ["everything"] }, "include[0]"],
    [{ model: "m", input: "x", store: "yes" }, "store"],
    [{ model: "m", input: "x", stream_options: {} }, "stream_options"],
    [{ model: "m", input: "x", metadata: { k: 1 } }, "metadata.k"],
    [{ model: "m", input: "x", truncation: "middle" }, "truncation"],
  ];
  for (const [body, param] of cases) assert.equal(paramOf(body), param, JSON.stringify(body));
});

Deno.test("an empty input is refused unless it continues a previous response", () => {
  assert.equal(paramOf({ model: "m", input: [] }), "input");
  const req = parseResponsesRequest({ model: "m", input: [], previous_response_id: "resp_1" });
  assert.deepEqual(req.input.value, []);
});

Deno.test("Codex's tools: namespaces flattened, custom tools as one-string functions, hosted tools noted", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: "hi",
    tools: [
      { type: "function", name: "exec_command", parameters: { type: "object", properties: {} } },
      {
        type: "namespace",
        name: "multi_agent_v1",
        description: "Sub-agents.",
        tools: [
          { type: "function", name: "spawn_agent", description: "Spawn.", strict: false },
          { type: "custom", name: "note" },
        ],
      },
      {
        type: "custom",
        name: "apply_patch",
        description: "Patch files.",
        format: { type: "text" },
      },
      { type: "web_search", external_web_access: true },
    ],
    tool_choice: { type: "custom", name: "apply_patch" },
  });
  assert.deepEqual(req.options.tools.map((t) => t.name), [
    "exec_command",
    "apply_patch",
    "multi_agent_v1__spawn_agent",
    "multi_agent_v1__note",
  ]);
  const patch = req.options.tools[1]!;
  assert.equal(patch.description, "Patch files.");
  assert.deepEqual((patch.parameters as { required: string[] }).required, ["input"]);
  assert.deepEqual(req.tools.wire("multi_agent_v1__note"), {
    kind: "custom",
    name: "note",
    namespace: "multi_agent_v1",
  });
  assert.deepEqual(req.hostedTools, [{ path: "tools[3].type", type: "web_search" }]);
  assert.deepEqual(req.options.toolChoice, { name: "apply_patch" });
  // The Response echoes the tools as sent (a function in OpenAI's full form).
  assert.deepEqual(req.echo.tools.slice(1), [
    {
      type: "namespace",
      name: "multi_agent_v1",
      description: "Sub-agents.",
      tools: [
        { type: "function", name: "spawn_agent", description: "Spawn.", strict: false },
        { type: "custom", name: "note" },
      ],
    },
    { type: "custom", name: "apply_patch", description: "Patch files.", format: { type: "text" } },
    { type: "web_search", external_web_access: true },
  ]);
});

Deno.test("a custom tool's grammar is told to the model; a forced hosted tool leaves the choice to it", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: "hi",
    tools: [
      {
        type: "custom",
        name: "math",
        format: { type: "grammar", syntax: "lark", definition: "start: NUMBER" },
      },
      { type: "file_search", vector_store_ids: ["vs_1"] },
    ],
    tool_choice: { type: "file_search" },
  });
  const schema = req.options.tools[0]!.parameters as {
    properties: { input: { description: string } };
  };
  assert.match(schema.properties.input.description, /lark grammar[\s\S]*start: NUMBER/);
  assert.equal(req.options.toolChoice, "auto");
});

Deno.test("namespace and custom tools name the field at fault", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ type: "namespace", name: "ns", description: "d", tools: [] }, "tools[0].tools"],
    [{ type: "namespace", name: "bad name", description: "d", tools: [] }, "tools[0].name"],
    [
      { type: "namespace", name: "ns", description: "d", tools: [{ type: "web_search" }] },
      "tools[0].tools[0].type",
    ],
    [
      {
        type: "namespace",
        name: "ns",
        description: "d",
        tools: [{ type: "function", name: "f" }, { type: "function", name: "f" }],
      },
      "tools[0].tools[1].name",
    ],
    [
      { type: "custom", name: "c", format: { type: "grammar", syntax: "ebnf" } },
      "tools[0].format.syntax",
    ],
  ];
  for (const [tool, param] of cases) {
    assert.equal(paramOf({ model: "m", input: "x", tools: [tool] }), param, JSON.stringify(tool));
  }
  assert.equal(
    paramOf({
      model: "m",
      input: "x",
      tools: [{ type: "function", name: "f" }],
      tool_choice: { type: "custom", name: "f" },
    }),
    "tool_choice.name",
  );
});

Deno.test("everything Codex CLI sends is accepted (a real request body)", async () => {
  const body = JSON.parse(
    await Deno.readTextFile(new URL("./fixtures/codex_0.171.0_request.json", import.meta.url)),
  );
  const req = parseResponsesRequest(body);
  assert.equal(req.store, false);
  assert.equal(req.includeEncrypted, true);
  assert.deepEqual(req.hostedTools.map((h) => h.type), ["web_search"]);
  assert.ok(req.options.tools.some((t) => t.name === "multi_agent_v1__spawn_agent"));
  for (const tool of req.options.tools) assert.match(tool.name, /^[A-Za-z0-9_-]{1,64}$/);
  assert.deepEqual(Object.keys(req.extras).sort(), ["client_metadata", "prompt_cache_key"]);
});
