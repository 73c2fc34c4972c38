import assert from "node:assert/strict";
import {
  type CanonicalRequest,
  defaultOptions,
  type DocumentPart,
  type Message,
  type Options,
} from "../../../src/canonical/conversation.ts";
import { ApiError } from "../../../src/errors.ts";
import { isClaude, toConverseRequest } from "../../../src/providers/bedrock/request.ts";

const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function request(messages: Message[], options: Partial<Options> = {}): CanonicalRequest {
  return {
    model: "claude",
    messages,
    options: { ...defaultOptions(), ...options },
    stream: false,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
  };
}

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });

Deno.test("bedrock request: Claude ids and inference profiles are told from other models", () => {
  assert.ok(isClaude(CLAUDE));
  assert.ok(isClaude("anthropic.claude-3-haiku-20240307-v1:0"));
  assert.ok(
    isClaude("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0"),
  );
  assert.ok(!isClaude("amazon.nova-pro-v1:0"));
  assert.ok(!isClaude("meta.llama3-70b-instruct-v1:0"));
});

Deno.test("bedrock request: system, merged turns, tool results first, cache points after their part", () => {
  const dropped = new Set<string>();
  const { body: body } = toConverseRequest(
    request([
      {
        role: "system",
        parts: [{ type: "text", text: "Be terse.", cache: { type: "ephemeral" } }],
      },
      user("What is the weather in Paris?"),
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Let me look." },
          { type: "tool_call", id: "t1", name: "get_weather", arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: "t1",
          content: [{ type: "text", text: "Sunny" }],
          isError: false,
        }],
      },
      {
        role: "user",
        parts: [{ type: "text", text: "And?", cache: { type: "ephemeral", ttl: "1h" } }],
      },
      { role: "tool", parts: [{ type: "tool_result", callId: "t2", content: [], isError: true }] },
    ], {
      maxTokens: 500,
      tools: [{
        name: "get_weather",
        parameters: { type: "object", properties: { city: { type: "string" } } },
        cache: { type: "ephemeral" },
      }],
      toolChoice: "required",
      stop: ["END"],
      temperature: 1.5,
    }),
    CLAUDE,
    dropped,
  );
  assert.deepEqual(body.system, [{ text: "Be terse." }, { cachePoint: { type: "default" } }]);
  assert.deepEqual(body.messages.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(body.messages[2]!.content, [
    { toolResult: { toolUseId: "t1", content: [{ text: "Sunny" }] } },
    { toolResult: { toolUseId: "t2", content: [{ text: "(empty)" }], status: "error" } },
    { text: "And?" },
    { cachePoint: { type: "default", ttl: "1h" } },
  ]);
  assert.deepEqual(body.messages[1]!.content[1], {
    toolUse: { toolUseId: "t1", name: "get_weather", input: { city: "Paris" } },
  });
  assert.deepEqual(body.inferenceConfig, {
    maxTokens: 500,
    temperature: 1,
    stopSequences: ["END"],
  });
  assert.deepEqual(body.toolConfig, {
    tools: [
      {
        toolSpec: {
          name: "get_weather",
          inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } },
        },
      },
      { cachePoint: { type: "default" } },
    ],
    toolChoice: { any: {} },
  });
  assert.deepEqual([...dropped], []);
});

Deno.test("bedrock request: thinking goes to additionalModelRequestFields; reasoning sent back first with its signature", () => {
  const dropped = new Set<string>();
  const { body: body } = toConverseRequest(
    request([
      user("Weather?"),
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "t1", name: "w", arguments: "{}" },
          { type: "reasoning", text: "I should call w.", signature: "sig==", style: "anthropic" },
          { type: "reasoning", text: "", redacted: "UkVEQUNURUQ=", style: "anthropic" },
          { type: "reasoning", text: "from elsewhere", style: "gemini" },
        ],
      },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: "t1",
          content: [{ type: "text", text: "ok" }],
          isError: false,
        }],
      },
    ], {
      maxTokens: 1000,
      reasoning: { budgetTokens: 2000 },
      tools: [{ name: "w" }],
      temperature: 0.3,
      topK: 5,
    }),
    CLAUDE,
    dropped,
  );
  assert.deepEqual(body.messages[1]!.content, [
    { reasoningContent: { reasoningText: { text: "I should call w.", signature: "sig==" } } },
    { reasoningContent: { redactedContent: "UkVEQUNURUQ=" } },
    { toolUse: { toolUseId: "t1", name: "w", input: {} } },
  ]);
  assert.deepEqual(body.additionalModelRequestFields, {
    thinking: { type: "enabled", budget_tokens: 2000 },
  });
  assert.equal(body.inferenceConfig.maxTokens, 3000, "room for the answer beside the budget");
  assert.deepEqual([...dropped].sort(), ["temperature", "top_k"]);
});

Deno.test("bedrock request: thinking is dropped with a forced tool, mid tool loop without reasoning, and off Claude", () => {
  const loop: Message[] = [
    user("Weather?"),
    { role: "assistant", parts: [{ type: "tool_call", id: "t1", name: "w", arguments: "{}" }] },
    { role: "tool", parts: [{ type: "tool_result", callId: "t1", content: [], isError: false }] },
  ];
  const cases: [Message[], Partial<Options>, string][] = [
    [[user("x")], {
      reasoning: { effort: "low" },
      tools: [{ name: "w" }],
      toolChoice: { name: "w" },
    }, CLAUDE],
    [loop, { reasoning: { effort: "low" }, tools: [{ name: "w" }] }, CLAUDE],
    [[user("x")], { reasoning: { effort: "low" } }, "amazon.nova-pro-v1:0"],
  ];
  for (const [messages, options, model] of cases) {
    const dropped = new Set<string>();
    const { body: body } = toConverseRequest(request(messages, options), model, dropped);
    assert.equal(body.additionalModelRequestFields, undefined);
    assert.ok(dropped.has("reasoning_effort"));
  }
});

Deno.test("bedrock request: images as bytes in their format; a URL is a 400 naming the field", () => {
  const { body: body } = toConverseRequest(
    request([{
      role: "user",
      parts: [{ type: "image", source: { kind: "data", mediaType: "image/png", base64: PNG } }],
    }]),
    CLAUDE,
    new Set(),
  );
  assert.deepEqual(body.messages[0]!.content, [{
    image: { format: "png", source: { bytes: PNG } },
  }]);
  assert.throws(
    () =>
      toConverseRequest(
        request([{
          role: "user",
          parts: [{ type: "text", text: "x" }, {
            type: "image",
            source: { kind: "url", url: "https://example.com/a.png" },
          }],
        }]),
        CLAUDE,
        new Set(),
      ),
    (e) =>
      e instanceof ApiError && e.status === 400 &&
      e.param === "messages[0].content[1].image_url.url",
  );
});

const PDF = btoa("%PDF-1.4\n%%EOF\n");
const pdf = (title?: string): DocumentPart => ({
  type: "document",
  source: { kind: "data", mediaType: "application/pdf", base64: PDF },
  ...(title === undefined ? {} : { title }),
});

Deno.test("bedrock request: documents as pdf bytes or txt text, with context, citations and a cache point", () => {
  const { body } = toConverseRequest(
    request([{
      role: "user",
      parts: [
        { type: "text", text: "Read:" },
        {
          type: "document",
          source: { kind: "data", mediaType: "application/pdf", base64: PDF },
          title: "Q3 report",
          context: "The figures",
          citations: true,
          cache: { type: "ephemeral" },
        },
        { type: "document", source: { kind: "text", text: "Plain words." }, citations: false },
      ],
    }]),
    CLAUDE,
    new Set(),
  );
  assert.deepEqual(body.messages[0]!.content, [
    { text: "Read:" },
    {
      document: {
        format: "pdf",
        name: "Q3 report",
        source: { bytes: PDF },
        context: "The figures",
        citations: { enabled: true },
      },
    },
    { cachePoint: { type: "default" } },
    {
      document: {
        format: "txt",
        name: "document",
        source: { text: "Plain words." },
        citations: { enabled: false },
      },
    },
  ]);
});

Deno.test("bedrock request: document names sanitised, cut to 200, distinct in the request", () => {
  const long = "x".repeat(250);
  const { body } = toConverseRequest(
    request([
      {
        role: "user",
        parts: [
          pdf("My  report (v2) [final].pdf"),
          pdf("  \u00e9t\u00e9\t\n_notes/2024!  "),
          pdf("???"),
          pdf(),
          pdf(long),
          pdf(long),
          pdf("My report (v2) [final] pdf"),
        ],
      },
    ]),
    CLAUDE,
    new Set(),
  );
  const names = body.messages[0]!.content.map((b) => "document" in b ? b.document.name : null);
  assert.deepEqual(names, [
    "My report (v2) [final] pdf",
    "ete notes 2024",
    "document",
    "document (2)",
    "x".repeat(200),
    `${"x".repeat(196)} (2)`,
    "My report (v2) [final] pdf (2)",
  ]);
});

Deno.test("bedrock request: a document URL is a 400 naming the field, in a message or a tool result", () => {
  const url: DocumentPart = {
    type: "document",
    source: { kind: "url", url: "https://example.com/a.pdf" },
  };
  const rejects = (messages: Message[], param: string) =>
    assert.throws(
      () => toConverseRequest(request(messages), CLAUDE, new Set()),
      (e) => e instanceof ApiError && e.status === 400 && e.param === param,
    );
  rejects(
    [{ role: "user", parts: [{ type: "text", text: "x" }, url] }],
    "messages[0].content[1].file.file_url",
  );
  rejects(
    [
      user("x"),
      { role: "assistant", parts: [{ type: "tool_call", id: "t1", name: "w", arguments: "{}" }] },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: "t1",
          content: [{ type: "text", text: "read:" }, url],
          isError: false,
        }],
      },
    ],
    "messages[2].content[0].content[1].file.file_url",
  );
});

Deno.test("bedrock request: a document a tool returned goes in its toolResult, or after its text without tools", () => {
  const history: Message[] = [
    user("x"),
    { role: "assistant", parts: [{ type: "tool_call", id: "t1", name: "w", arguments: "{}" }] },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "t1",
        content: [{ type: "text", text: "here" }, pdf("a.pdf")],
        isError: false,
      }],
    },
  ];
  const doc = { document: { format: "pdf", name: "a pdf", source: { bytes: PDF } } };
  const { body } = toConverseRequest(
    request(history, { tools: [{ name: "w" }] }),
    CLAUDE,
    new Set(),
  );
  assert.deepEqual(body.messages[2], {
    role: "user",
    content: [{ toolResult: { toolUseId: "t1", content: [{ text: "here" }, doc] } }],
  });
  const { body: bare } = toConverseRequest(request(history), CLAUDE, new Set());
  assert.deepEqual(bare.messages[2], {
    role: "user",
    content: [{ text: "[tool result for t1]: here" }, doc],
  });
});

Deno.test("bedrock request: with no tools offered (or none chosen) the conversation's tool blocks go as text; what Converse lacks is named", () => {
  const dropped = new Set<string>();
  const { body: none } = toConverseRequest(
    request([user("x")], {
      tools: [{ name: "w" }],
      toolChoice: "none",
      seed: 1,
      user: "u",
      parallelToolCalls: false,
    }),
    "amazon.nova-pro-v1:0",
    dropped,
  );
  assert.equal(none.toolConfig, undefined);
  assert.deepEqual([...dropped].sort(), ["seed", "user"]);
  const history: Message[] = [
    user("x"),
    {
      role: "assistant",
      parts: [{ type: "tool_call", id: "t1", name: "w", arguments: '{"a":1}' }],
    },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "t1",
        content: [{ type: "text", text: "done" }, {
          type: "image",
          source: { kind: "data", mediaType: "image/png", base64: PNG },
        }],
        isError: true,
      }],
    },
  ];
  for (const options of [{}, { tools: [{ name: "w" }], toolChoice: "none" as const }]) {
    const { body } = toConverseRequest(request(history, options), CLAUDE, new Set());
    assert.equal(body.toolConfig, undefined);
    assert.deepEqual(body.messages.slice(1), [
      { role: "assistant", content: [{ text: '[tool call w (t1): {"a":1}]' }] },
      {
        role: "user",
        content: [
          { text: "[tool error for t1]: done" },
          { image: { format: "png", source: { bytes: PNG } } },
        ],
      },
    ]);
  }
});

Deno.test("bedrock request: a JSON answer is a forced json_output tool, beside the caller's tools or alone", () => {
  const schema = { type: "object", properties: { name: { type: "string" } } };
  const output = { type: "json_schema" as const, name: "person", schema, strict: true };
  const dropped = new Set<string>();
  const alone = toConverseRequest(request([user("x")], { output }), CLAUDE, dropped);
  assert.equal(alone.jsonTool, "json_output");
  assert.deepEqual(alone.body.toolConfig, {
    tools: [{
      toolSpec: {
        name: "json_output",
        description:
          'Give your answer as this tool\'s input: a JSON object matching the schema "person".',
        inputSchema: { json: schema },
      },
    }],
    toolChoice: { tool: { name: "json_output" } },
  });
  assert.deepEqual([...dropped], ["strict"]);
  const beside = toConverseRequest(
    request([user("x")], { output: { type: "json" }, tools: [{ name: "json_output" }] }),
    CLAUDE,
    new Set(),
  );
  assert.equal(beside.jsonTool, "json_output_2");
  assert.deepEqual(beside.body.toolConfig?.toolChoice, { any: {} });
  const required = new Set<string>();
  const forced = toConverseRequest(
    request([user("x")], {
      output: { type: "json" },
      tools: [{ name: "w" }],
      toolChoice: "required",
    }),
    CLAUDE,
    required,
  );
  assert.equal(forced.jsonTool, null);
  assert.ok(required.has("response_format"));
});
