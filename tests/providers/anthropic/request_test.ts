import assert from "node:assert/strict";
import type { Message, Options, ToolSpec } from "../../../src/canonical/conversation.ts";
import { ApiError } from "../../../src/errors.ts";
import { toAnthropicRequest } from "../../../src/providers/anthropic/request.ts";
import type { MessagesRequest } from "../../../src/types/anthropic.ts";
import { chatRequest } from "../../support/provider_call.ts";
import { dataUrl, gifBytes, pngBytes } from "../../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;
const GIF_1x1 = dataUrl("image/gif", gifBytes(1, 1)).split(",")[1]!;

const WEATHER: ToolSpec = {
  name: "get_weather",
  description: "Weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });
const result = (callId: string, text: string): Message => ({
  role: "tool",
  parts: [{ type: "tool_result", callId, content: [{ type: "text", text }], isError: false }],
});
const call = (id: string, name: string, args: string) =>
  ({ type: "tool_call", id, name, arguments: args }) as const;

/** The body for a request with `options` (and `messages`), to `model`; `dropped` collects. */
function body(
  options: Partial<Options> = {},
  messages?: Message[],
  model = "claude-x",
  dropped = new Set<string>(),
): MessagesRequest {
  const req = chatRequest(messages ? { messages } : {}, options);
  return toAnthropicRequest(req, model, false, dropped).body;
}

/** What is dropped for a request with `options` (and `messages`), to `model`. */
function droppedBy(options: Partial<Options>, messages?: Message[], model = "claude-x"): string[] {
  const dropped = new Set<string>();
  body(options, messages, model, dropped);
  return [...dropped].sort();
}

Deno.test("toAnthropicRequest translates a whole tool conversation exactly", () => {
  const req = chatRequest({
    messages: [
      { role: "system", parts: [{ type: "text", text: "Be brief." }] },
      user("Hi"),
      {
        role: "user",
        parts: [
          { type: "text", text: "Look:" },
          { type: "image", source: { kind: "data", mediaType: "image/png", base64: PNG_1x1 } },
          { type: "text", text: "   " },
        ],
      },
      { role: "developer", parts: [{ type: "text", text: "Use tools." }] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "" },
          call("call_1", "get_weather", '{"city":"Paris"}'),
          call("call_2", "now", ""),
        ],
      },
      result("call_1", "18C"),
      {
        role: "tool",
        parts: [{ type: "tool_result", callId: "call_2", content: [], isError: true }],
      },
      user("Thanks. And now?"),
      { role: "assistant", parts: [{ type: "text", text: "Sunny." }] },
      user("Bye"),
    ],
  }, {
    maxTokens: 100,
    maxTokensGiven: true,
    temperature: 0.4,
    stop: ["END"],
    tools: [WEATHER, { name: "now" }],
    toolChoice: "auto",
  });
  assert.deepEqual(toAnthropicRequest(req, "claude-x", false, new Set()), {
    jsonTool: null,
    body: {
      model: "claude-x",
      max_tokens: 100,
      system: [{ type: "text", text: "Be brief." }, { type: "text", text: "Use tools." }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: "Look:" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1 } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "call_2", name: "now", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "18C" },
            { type: "tool_result", tool_use_id: "call_2", is_error: true },
            { type: "text", text: "Thanks. And now?" },
          ],
        },
        { role: "assistant", content: [{ type: "text", text: "Sunny." }] },
        { role: "user", content: [{ type: "text", text: "Bye" }] },
      ],
      stop_sequences: ["END"],
      temperature: 0.4,
      tools: [
        {
          name: "get_weather",
          description: "Weather in a city",
          input_schema: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          },
        },
        { name: "now", input_schema: { type: "object", properties: {} } },
      ],
      tool_choice: { type: "auto" },
    },
  });
});

Deno.test("toAnthropicRequest: max_tokens always, temperature only when given, stream flag", () => {
  const plain = toAnthropicRequest(chatRequest(), "m", true, new Set()).body;
  assert.equal(plain.max_tokens, 256);
  assert.equal("temperature" in plain, false);
  assert.equal(plain.stream, true);
  assert.equal("tools" in plain || "tool_choice" in plain || "system" in plain, false);
  assert.equal("stop_sequences" in plain || "thinking" in plain || "metadata" in plain, false);
});

Deno.test("toAnthropicRequest passes temperature unchanged, clamped into 0–1 (0.3 stays 0.3)", () => {
  assert.deepEqual(
    [0, 0.3, 0.5, 1, 1.6, 2].map((temperature) => body({ temperature }).temperature),
    [0, 0.3, 0.5, 1, 1, 1],
  );
  assert.deepEqual(droppedBy({ temperature: 1.6 }), []);
});

Deno.test("toAnthropicRequest: temperature and top_p together → only temperature, top_p dropped", () => {
  const both = new Set<string>();
  const sent = body({ temperature: 0.2, topP: 0.9 }, undefined, "claude-x", both);
  assert.equal(sent.temperature, 0.2);
  assert.equal("top_p" in sent, false);
  assert.deepEqual([...both], ["top_p"]);
  assert.equal(body({ topP: 0.9 }).top_p, 0.9);
  assert.equal(body({ topK: 40 }).top_k, 40);
});

Deno.test("toAnthropicRequest drops what Anthropic has no field for, by wire name", () => {
  const dropped = new Set<string>();
  const req = chatRequest({
    extras: { protocol: "openai_chat", fields: { n: 2, logprobs: true, logit_bias: {} } },
  }, {
    seed: 7,
    frequencyPenalty: 0.5,
    presencePenalty: 0.1,
    metadata: { team: "a" },
    user: "u-42",
  });
  const sent = toAnthropicRequest(req, "claude-x", false, dropped).body;
  assert.deepEqual(sent.metadata, { user_id: "u-42" });
  assert.deepEqual([...dropped].sort(), [
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "metadata",
    "n",
    "presence_penalty",
    "seed",
  ]);
  for (const key of ["seed", "n", "logprobs", "frequency_penalty"]) {
    assert.equal(key in sent, false);
  }
});

Deno.test("toAnthropicRequest passes a Messages front door's extras on, its own fields winning", () => {
  const dropped = new Set<string>();
  const req = chatRequest({
    extras: {
      protocol: "anthropic_messages",
      fields: { service_tier: "standard_only", max_tokens: 1, container: "c_1" },
    },
  });
  const sent = toAnthropicRequest(req, "claude-x", false, dropped).body as unknown as Record<
    string,
    unknown
  >;
  assert.equal(sent.service_tier, "standard_only");
  assert.equal(sent.container, "c_1");
  assert.equal(sent.max_tokens, 256);
  assert.deepEqual([...dropped], []);
});

Deno.test("toAnthropicRequest maps tool_choice auto/required/named/none and parallel_tool_calls", () => {
  const choice = (options: Partial<Options>) => body({ tools: [WEATHER], ...options }).tool_choice;
  assert.equal(choice({}), undefined);
  assert.deepEqual(choice({ toolChoice: "auto" }), { type: "auto" });
  assert.deepEqual(choice({ toolChoice: "required" }), { type: "any" });
  assert.deepEqual(choice({ toolChoice: "none" }), { type: "none" });
  assert.deepEqual(choice({ toolChoice: { name: "get_weather" } }), {
    type: "tool",
    name: "get_weather",
  });
  assert.deepEqual(choice({ parallelToolCalls: false }), {
    type: "auto",
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(choice({ toolChoice: "required", parallelToolCalls: false }), {
    type: "any",
    disable_parallel_tool_use: true,
  });
  // tool_choice without tools is not sent (Anthropic rejects it).
  assert.equal("tool_choice" in body({ toolChoice: "auto" }), false);
});

Deno.test("toAnthropicRequest: images as base64 (type from the data) or https URL sources", () => {
  const image = (source: Message["parts"][number] & { type: "image" }) =>
    (body({}, [{ role: "user", parts: [source] }]).messages[0]!.content as unknown[])[0];
  assert.deepEqual(
    image({ type: "image", source: { kind: "data", mediaType: "image/gif", base64: GIF_1x1 } }),
    { type: "image", source: { type: "base64", media_type: "image/gif", data: GIF_1x1 } },
  );
  assert.deepEqual(
    image({ type: "image", source: { kind: "url", url: `data:image/png;base64,${PNG_1x1}` } }),
    { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1 } },
    "a data URL in a url source is sent inline",
  );
  assert.deepEqual(
    image({ type: "image", source: { kind: "url", url: "https://example.com/cat.png" } }),
    { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
  );
  assert.throws(
    () => image({ type: "image", source: { kind: "url", url: "http://example.com/cat.png" } }),
    (e) =>
      e instanceof ApiError && e.status === 400 &&
      e.param === "messages[0].content[0].image_url.url",
  );
  const detail: Message = {
    role: "user",
    parts: [{
      type: "image",
      detail: "low",
      source: { kind: "data", mediaType: "image/png", base64: PNG_1x1 },
    }],
  };
  assert.deepEqual(droppedBy({}, [detail]), ["detail"]);
});

Deno.test("toAnthropicRequest: tool results with images go as blocks, first in their turn", () => {
  const messages: Message[] = [
    user("Draw"),
    { role: "assistant", parts: [call("c1", "draw", "{}")] },
    user("meanwhile"),
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c1",
        content: [
          { type: "text", text: "done:" },
          { type: "image", source: { kind: "data", mediaType: "image/png", base64: PNG_1x1 } },
        ],
        isError: false,
      }],
    },
  ];
  assert.deepEqual(body({}, messages).messages[2], {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "c1",
        content: [
          { type: "text", text: "done:" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1 } },
        ],
      },
      { type: "text", text: "meanwhile" },
    ],
  });
});

const PDF = btoa("%PDF-1.4\n%%EOF\n");

Deno.test("toAnthropicRequest: documents as document blocks (PDF, URL, text) with their fields", () => {
  const messages: Message[] = [{
    role: "user",
    parts: [
      { type: "text", text: "Read these:" },
      {
        type: "document",
        source: { kind: "data", mediaType: "application/pdf", base64: PDF },
        title: "report.pdf",
        context: "Q3 figures",
        citations: true,
        cache: { type: "ephemeral", ttl: "1h" },
      },
      { type: "document", source: { kind: "url", url: "https://example.com/a.pdf" } },
      { type: "document", source: { kind: "text", text: "Plain words." }, citations: false },
    ],
  }];
  assert.deepEqual(body({}, messages).messages[0]!.content, [
    { type: "text", text: "Read these:" },
    {
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: PDF },
      title: "report.pdf",
      context: "Q3 figures",
      citations: { enabled: true },
      cache_control: { type: "ephemeral", ttl: "1h" },
    },
    { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
    {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: "Plain words." },
      citations: { enabled: false },
    },
  ]);
  assert.deepEqual(droppedBy({}, messages), []);
});

Deno.test("toAnthropicRequest: a document a tool returned stays in its tool_result", () => {
  const messages: Message[] = [
    user("Fetch it"),
    { role: "assistant", parts: [call("c1", "fetch", "{}")] },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c1",
        content: [{
          type: "document",
          source: { kind: "data", mediaType: "application/pdf", base64: PDF },
          title: "a.pdf",
        }],
        isError: false,
      }],
    },
  ];
  assert.deepEqual(body({}, messages).messages[2], {
    role: "user",
    content: [{
      type: "tool_result",
      tool_use_id: "c1",
      content: [{
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: PDF },
        title: "a.pdf",
      }],
    }],
  });
});

Deno.test("toAnthropicRequest rejects tool-call arguments that are not a JSON object, naming them", () => {
  for (const args of ["{not json", "[1,2]", "42"]) {
    const messages: Message[] = [
      user("x"),
      { role: "assistant", parts: [call("c", "f", args)] },
      result("c", "ok"),
    ];
    assert.throws(
      () => body({}, messages),
      (e) =>
        e instanceof ApiError && e.status === 400 &&
        e.param === "messages[1].tool_calls[0].function.arguments",
    );
  }
});

Deno.test("toAnthropicRequest: a conversation of only blank or system messages is a 400", () => {
  const messages: Message[] = [
    { role: "system", parts: [{ type: "text", text: "x" }] },
    user("  "),
  ];
  assert.throws(
    () => body({}, messages),
    (e) => e instanceof ApiError && e.status === 400 && e.param === "messages",
  );
});

Deno.test("toAnthropicRequest: refusals go back as text (Anthropic has no refusal input)", () => {
  const messages: Message[] = [
    user("Do it"),
    { role: "assistant", parts: [{ type: "refusal", text: "I can't help with that." }] },
    user("Please"),
  ];
  assert.deepEqual(body({}, messages).messages[1], {
    role: "assistant",
    content: [{ type: "text", text: "I can't help with that." }],
  });
});

Deno.test("toAnthropicRequest: cache markers become cache_control on system, blocks and tools", () => {
  const cache = { type: "ephemeral" as const };
  const sent = body(
    { tools: [{ ...WEATHER, cache: { type: "ephemeral", ttl: "1h" } }] },
    [
      { role: "system", parts: [{ type: "text", text: "Long rules.", cache }] },
      {
        role: "user",
        parts: [
          {
            type: "image",
            source: { kind: "data", mediaType: "image/png", base64: PNG_1x1 },
            cache,
          },
          { type: "text", text: "Question", cache },
          // A marker on blank text (dropped) moves to the block before it.
          { type: "text", text: " ", cache: { type: "ephemeral", ttl: "5m" } },
        ],
      },
      { role: "assistant", parts: [{ ...call("c1", "get_weather", "{}"), cache }] },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: "c1",
          content: [{ type: "text", text: "ok" }],
          isError: false,
          cache,
        }],
      },
    ],
  );
  assert.deepEqual(sent.system, [{
    type: "text",
    text: "Long rules.",
    cache_control: { type: "ephemeral" },
  }]);
  assert.deepEqual(sent.tools![0]!.cache_control, { type: "ephemeral", ttl: "1h" });
  assert.deepEqual(sent.messages, [
    {
      role: "user",
      content: [
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG_1x1 },
          cache_control: { type: "ephemeral" },
        },
        { type: "text", text: "Question", cache_control: { type: "ephemeral", ttl: "5m" } },
      ],
    },
    {
      role: "assistant",
      content: [{
        type: "tool_use",
        id: "c1",
        name: "get_weather",
        input: {},
        cache_control: { type: "ephemeral" },
      }],
    },
    {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "c1",
        content: "ok",
        cache_control: { type: "ephemeral" },
      }],
    },
  ]);
});

const SIGNED = {
  type: "reasoning",
  text: "The user wants weather.",
  signature: "sig-1",
  style: "anthropic",
} as const;

Deno.test("toAnthropicRequest: Anthropic reasoning goes back as thinking blocks, first in the turn", () => {
  const messages: Message[] = [
    user("Weather?"),
    {
      role: "assistant",
      parts: [
        { type: "text", text: "Checking." },
        SIGNED,
        call("c1", "get_weather", '{"city":"Paris"}'),
      ],
    },
    {
      role: "assistant",
      parts: [
        { type: "reasoning", text: "", redacted: "opaque==", style: "anthropic" },
        // Not Anthropic's, or without a signature: Anthropic could not check them.
        { type: "reasoning", text: "OpenAI thought", signature: "x", style: "openai" },
        { type: "reasoning", text: "unsigned", style: "anthropic" },
        { type: "reasoning", text: "styleless", signature: "y" },
        call("c2", "get_weather", '{"city":"Rome"}'),
      ],
    },
    result("c1", "18C"),
    result("c2", "20C"),
  ];
  assert.deepEqual(body({}, messages).messages[1], {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "The user wants weather.", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque==" },
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "c1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "c2", name: "get_weather", input: { city: "Rome" } },
    ],
  });
});

Deno.test("toAnthropicRequest: reasoning effort → a thinking budget (the documented table)", () => {
  const thinking = (effort: "minimal" | "low" | "medium" | "high") =>
    body({ reasoning: { effort }, maxTokens: 20_000 }).thinking;
  assert.deepEqual(
    (["minimal", "low", "medium", "high"] as const).map(thinking),
    [1024, 2048, 8192, 16384].map((budget_tokens) => ({ type: "enabled", budget_tokens })),
  );
  // A budget wins over an effort, raised to Anthropic's minimum.
  assert.deepEqual(body({ reasoning: { budgetTokens: 3000, effort: "high" } }).thinking, {
    type: "enabled",
    budget_tokens: 3000,
  });
  assert.deepEqual(body({ reasoning: { budgetTokens: 10 } }).thinking, {
    type: "enabled",
    budget_tokens: 1024,
  });
  assert.equal("thinking" in body({ reasoning: { effort: "high", disabled: true } }), false);
  assert.equal("thinking" in body({ reasoning: {} }), false);
});

Deno.test("toAnthropicRequest: max_tokens is raised above the thinking budget, keeping the answer's", () => {
  assert.equal(body({ reasoning: { effort: "medium" }, maxTokens: 256 }).max_tokens, 8192 + 256);
  assert.equal(body({ reasoning: { effort: "medium" }, maxTokens: 8192 }).max_tokens, 16384);
  assert.equal(body({ reasoning: { effort: "medium" }, maxTokens: 9000 }).max_tokens, 9000);
});

Deno.test("toAnthropicRequest: Claude 4.7 and later think adaptively, with an effort", () => {
  const sent = body({ reasoning: { effort: "minimal" } }, undefined, "claude-opus-4-7");
  assert.deepEqual(sent.thinking, { type: "adaptive" });
  assert.deepEqual(sent.output_config, { effort: "low" });
  assert.equal(sent.max_tokens, 256);
  assert.deepEqual(
    body({ reasoning: { budgetTokens: 5000 } }, undefined, "claude-opus-4-7").output_config,
    { effort: "medium" },
  );
});

Deno.test("toAnthropicRequest: with thinking, temperature ≠ 1, low top_p and top_k are dropped", () => {
  const dropped = new Set<string>();
  const sent = body(
    { reasoning: { effort: "low" }, temperature: 0.3, topK: 5, topP: 0.5 },
    undefined,
    "claude-sonnet-4-5",
    dropped,
  );
  assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal("temperature" in sent || "top_k" in sent || "top_p" in sent, false);
  assert.deepEqual([...dropped].sort(), ["temperature", "top_k", "top_p"]);
  assert.equal(body({ reasoning: { effort: "low" }, temperature: 1 }).temperature, 1);
  assert.equal(body({ reasoning: { effort: "low" }, topP: 0.97 }).top_p, 0.97);
});

Deno.test("toAnthropicRequest: models with fixed sampling get only what they accept", () => {
  assert.deepEqual(droppedBy({ temperature: 0.5, topK: 3 }, undefined, "claude-sonnet-4-8"), [
    "temperature",
    "top_k",
  ]);
  assert.deepEqual(droppedBy({ topP: 0.95 }, undefined, "claude-sonnet-4-8"), ["top_p"]);
  assert.equal(body({ topP: 0.995 }, undefined, "claude-sonnet-4-8").top_p, 0.995);
});

Deno.test("toAnthropicRequest: no thinking where Anthropic refuses it, the reasoning reported dropped", () => {
  // A model without thinking.
  assert.deepEqual(droppedBy({ reasoning: { effort: "low" } }, undefined, "claude-3-5-haiku"), [
    "reasoning_effort",
  ]);
  // A forced tool choice: the caller's choice is kept.
  const forced = new Set<string>();
  const sent = body(
    { reasoning: { budgetTokens: 2000 }, tools: [WEATHER], toolChoice: "required" },
    undefined,
    "claude-x",
    forced,
  );
  assert.equal("thinking" in sent, false);
  assert.deepEqual(sent.tool_choice, { type: "any" });
  assert.deepEqual([...forced], ["thinking"]);
  // Mid tool loop, when the calls' turn has no thinking block (an OpenAI client's history).
  const loop = (
    assistant: Message,
  ): Message[] => [user("Weather?"), assistant, result("c1", "18C")];
  const bare = loop({ role: "assistant", parts: [call("c1", "get_weather", "{}")] });
  assert.deepEqual(droppedBy({ reasoning: { effort: "low" } }, bare), ["reasoning_effort"]);
  const kept = loop({ role: "assistant", parts: [SIGNED, call("c1", "get_weather", "{}")] });
  assert.deepEqual(droppedBy({ reasoning: { effort: "low" } }, kept), []);
  assert.deepEqual(body({ reasoning: { effort: "low" } }, kept).thinking, {
    type: "enabled",
    budget_tokens: 2048,
  });
});

const REPORT = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1 },
    temperature: { type: "number", minimum: -90, maximum: 60 },
  },
  required: ["city", "temperature"],
  additionalProperties: false,
};

Deno.test("toAnthropicRequest: a JSON schema on a model with structured outputs → output_config", () => {
  const call = toAnthropicRequest(
    chatRequest({}, {
      output: { type: "json_schema", name: "report", schema: REPORT, strict: true },
    }),
    "claude-sonnet-4-5-20250929",
    false,
    new Set(),
  );
  assert.equal(call.jsonTool, null);
  assert.equal("tools" in call.body, false);
  assert.deepEqual(call.body.output_config, {
    format: {
      type: "json_schema",
      schema: {
        type: "object",
        properties: {
          city: { type: "string", description: "{minLength: 1}" },
          temperature: { type: "number", description: "{minimum: -90, maximum: 60}" },
        },
        additionalProperties: false,
        required: ["city", "temperature"],
      },
    },
  });
});

Deno.test("toAnthropicRequest: strict tools keep strict (schema made acceptable) only where supported", () => {
  const strict = { ...WEATHER, strict: true, parameters: REPORT };
  const native = body({ tools: [strict] }, undefined, "claude-haiku-4-5").tools![0]!;
  assert.equal(native.strict, true);
  assert.deepEqual(native.input_schema.properties, {
    city: { type: "string", description: "{minLength: 1}" },
    temperature: { type: "number", description: "{minimum: -90, maximum: 60}" },
  });
  const dropped = new Set<string>();
  const old = body({ tools: [strict] }, undefined, "claude-3-7-sonnet-20250219", dropped)
    .tools![0]!;
  assert.equal("strict" in old, false);
  assert.deepEqual(old.input_schema, REPORT);
  assert.deepEqual([...dropped], ["strict"]);
});

Deno.test("toAnthropicRequest: JSON without native structured outputs → a forced json_output tool", () => {
  const schema = { type: "json_schema", name: "report", schema: REPORT, strict: true } as const;
  const old = toAnthropicRequest(
    chatRequest({}, { output: schema }),
    "claude-3-5-haiku-latest",
    false,
    new Set(),
  );
  assert.equal(old.jsonTool, "json_output");
  assert.equal("output_config" in old.body, false);
  assert.deepEqual(old.body.tools, [{
    name: "json_output",
    description:
      'Give your answer as this tool\'s input: a JSON object matching the schema "report".',
    input_schema: REPORT,
  }]);
  assert.deepEqual(old.body.tool_choice, { type: "tool", name: "json_output" });
  // JSON without a schema: Anthropic has no mode for it, on any model.
  const json = toAnthropicRequest(
    chatRequest({}, { output: { type: "json" } }),
    "claude-sonnet-4-5",
    false,
    new Set(),
  );
  assert.deepEqual(json.body.tools![0]!.input_schema, { type: "object" });
  assert.deepEqual(json.body.tool_choice, { type: "tool", name: "json_output" });
});

Deno.test("toAnthropicRequest: the forced JSON tool beside the caller's tools", () => {
  const json = { output: { type: "json" } } as const;
  const names = (o: Partial<Options>) => {
    const call = toAnthropicRequest(chatRequest({}, { ...json, ...o }), "m", false, new Set());
    return {
      tools: call.body.tools?.map((t) => t.name),
      choice: call.body.tool_choice,
      jsonTool: call.jsonTool,
    };
  };
  // May call the caller's tools instead.
  assert.deepEqual(names({ tools: [WEATHER], parallelToolCalls: false }), {
    tools: ["get_weather", "json_output"],
    choice: { type: "any", disable_parallel_tool_use: true },
    jsonTool: "json_output",
  });
  assert.deepEqual(names({ tools: [WEATHER], toolChoice: "none" }), {
    tools: ["get_weather", "json_output"],
    choice: { type: "tool", name: "json_output" },
    jsonTool: "json_output",
  });
  // The caller requires a call of its own tools: the answer is a call.
  assert.deepEqual(names({ tools: [WEATHER], toolChoice: "required" }), {
    tools: ["get_weather"],
    choice: { type: "any" },
    jsonTool: null,
  });
  // A caller's tool of the same name.
  assert.equal(names({ tools: [{ name: "json_output" }] }).jsonTool, "json_output_2");
});

Deno.test("toAnthropicRequest: a system message after an assistant turn stays at its place, marked as a system reminder", () => {
  const got = body({ tools: [WEATHER] }, [
    { role: "system", parts: [{ type: "text", text: "Be brief." }] },
    user("Hi"),
    { role: "assistant", parts: [call("call_1", "get_weather", '{"city":"Paris"}')] },
    { role: "system", parts: [{ type: "text", text: "Tools changed." }] },
    result("call_1", "18C"),
  ]);
  assert.deepEqual(got.system, [{ type: "text", text: "Be brief." }]);
  assert.deepEqual(got.messages.at(-1), {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "call_1", content: "18C" },
      { type: "text", text: "<system-reminder>\nTools changed.\n</system-reminder>" },
    ],
  });
});
