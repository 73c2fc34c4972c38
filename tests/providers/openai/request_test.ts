/** Canonical request → chat completions body: every modelled field, the extras, what is left
 * out and reported. */
import assert from "node:assert/strict";
import type { Message, ReasoningOptions, ToolSpec } from "../../../src/canonical/conversation.ts";
import {
  type OpenAIRequestOptions,
  toOpenAIRequest,
} from "../../../src/providers/openai/request.ts";
import { ApiError } from "../../../src/errors.ts";
import { chatRequest } from "../../support/provider_call.ts";

const OPTIONS: OpenAIRequestOptions = {
  upstreamModel: "gpt-up",
  stream: false,
  maxTokensField: "max_tokens",
};

const WEATHER: ToolSpec = {
  name: "get_weather",
  description: "Weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: true,
  cache: { type: "ephemeral" },
};

Deno.test("toOpenAIRequest: a whole conversation, message by message", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      messages: [
        {
          role: "system",
          parts: [
            { type: "text", text: "Be brief." },
            { type: "text", text: "Be kind.", cache: { type: "ephemeral", ttl: "1h" } },
          ],
        },
        { role: "developer", parts: [{ type: "text", text: "Use tools." }], name: "ops" },
        { role: "user", parts: [{ type: "text", text: "Hi" }], name: "ann" },
        {
          role: "user",
          parts: [
            { type: "text", text: "Look:" },
            {
              type: "image",
              source: { kind: "data", mediaType: "image/png", base64: "AAAA" },
              detail: "low",
            },
            { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
          ],
        },
        {
          role: "assistant",
          parts: [
            { type: "text", text: "Checking." },
            { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
            { type: "tool_call", id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
          ],
        },
        {
          role: "tool",
          parts: [{
            type: "tool_result",
            callId: "call_1",
            content: [{ type: "text", text: "18C" }, { type: "text", text: "sunny" }],
            isError: false,
          }],
        },
        {
          role: "tool",
          parts: [{ type: "tool_result", callId: "call_2", content: [], isError: true }],
        },
        { role: "assistant", parts: [{ type: "refusal", text: "I can't help with that." }] },
        { role: "user", parts: [{ type: "text", text: "Bye" }] },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual(dropped, ["is_error"]);
  assert.deepEqual(body, {
    model: "gpt-up",
    messages: [
      { role: "system", content: "Be brief.\nBe kind." },
      { role: "system", content: "Use tools.", name: "ops" },
      { role: "user", content: "Hi", name: "ann" },
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
        ],
      },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
          {
            id: "call_2",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", content: "18C\nsunny", tool_call_id: "call_1" },
      { role: "tool", content: "", tool_call_id: "call_2" },
      { role: "assistant", content: null, refusal: "I can't help with that." },
      { role: "user", content: "Bye" },
    ],
    max_tokens: 256,
  });
});

Deno.test("toOpenAIRequest: tool results in a user message (Anthropic's form) come first, as tool messages", () => {
  const png = { kind: "data", mediaType: "image/png", base64: "AAAA" } as const;
  const { body } = toOpenAIRequest(
    chatRequest({
      messages: [
        { role: "user", parts: [{ type: "text", text: "Chart and weather?" }] },
        {
          role: "assistant",
          parts: [
            { type: "tool_call", id: "t1", name: "chart", arguments: "{}" },
            { type: "tool_call", id: "t2", name: "get_weather", arguments: "{}" },
          ],
        },
        {
          role: "user",
          parts: [
            {
              type: "tool_result",
              callId: "t1",
              content: [{ type: "text", text: "here" }, { type: "image", source: png }],
              isError: false,
            },
            {
              type: "tool_result",
              callId: "t2",
              content: [{ type: "text", text: "rain" }],
              isError: false,
            },
            { type: "text", text: "Summarise." },
          ],
        },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual((body.messages as unknown[]).slice(1), [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "t1", type: "function", function: { name: "chart", arguments: "{}" } },
        { id: "t2", type: "function", function: { name: "get_weather", arguments: "{}" } },
      ],
    },
    { role: "tool", content: "here", tool_call_id: "t1" },
    { role: "tool", content: "rain", tool_call_id: "t2" },
    {
      role: "user",
      content: [
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        { type: "text", text: "Summarise." },
      ],
    },
  ]);
});

Deno.test("toOpenAIRequest: an image from a tool message waits for the run of tool messages to end", () => {
  const png = { kind: "data", mediaType: "image/png", base64: "AAAA" } as const;
  const { body } = toOpenAIRequest(
    chatRequest({
      messages: [
        { role: "user", parts: [{ type: "text", text: "Go" }] },
        {
          role: "assistant",
          parts: [
            { type: "tool_call", id: "a", name: "f", arguments: "{}" },
            { type: "tool_call", id: "b", name: "f", arguments: "{}" },
          ],
        },
        {
          role: "tool",
          parts: [{
            type: "tool_result",
            callId: "a",
            content: [{ type: "image", source: png }],
            isError: false,
          }],
        },
        {
          role: "tool",
          parts: [{ type: "tool_result", callId: "b", content: [], isError: false }],
        },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual((body.messages as unknown[]).slice(2), [
    { role: "tool", content: "", tool_call_id: "a" },
    { role: "tool", content: "", tool_call_id: "b" },
    {
      role: "user",
      content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }],
    },
  ]);
});

const PDF = { kind: "data", mediaType: "application/pdf", base64: "JVBERi0=" } as const;

Deno.test("toOpenAIRequest: documents in place: a PDF as a file part, a text as text; context and citations reported", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      messages: [{
        role: "user",
        parts: [
          { type: "text", text: "Read:" },
          { type: "document", source: PDF, title: "q3.pdf", context: "figures", citations: true },
          { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
          { type: "document", source: PDF, cache: { type: "ephemeral" } },
          { type: "document", source: PDF, title: "Q3 report" },
          { type: "document", source: { kind: "text", text: "Plain." }, title: "notes.txt" },
          { type: "document", source: { kind: "text", text: "Untitled." }, citations: false },
        ],
      }],
    }),
    OPTIONS,
  );
  assert.deepEqual(body.messages, [{
    role: "user",
    content: [
      { type: "text", text: "Read:" },
      {
        type: "file",
        file: { filename: "q3.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
      },
      { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
      {
        type: "file",
        file: { filename: "document.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
      },
      {
        type: "file",
        file: { filename: "Q3 report.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
      },
      { type: "text", text: "notes.txt\nPlain." },
      { type: "text", text: "Untitled." },
    ],
  }]);
  assert.deepEqual(dropped, ["context", "citations"]);
  const alone = toOpenAIRequest(
    chatRequest({
      messages: [{
        role: "user",
        parts: [{ type: "document", source: { kind: "text", text: "x" } }],
      }],
    }),
    OPTIONS,
  );
  assert.deepEqual(alone.body.messages, [{ role: "user", content: "x" }]);
  assert.deepEqual(alone.dropped, []);
});

Deno.test("toOpenAIRequest: a document a tool returned waits with its images for the run of tool messages to end", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      messages: [
        { role: "user", parts: [{ type: "text", text: "Go" }] },
        { role: "assistant", parts: [{ type: "tool_call", id: "a", name: "f", arguments: "{}" }] },
        {
          role: "user",
          parts: [
            {
              type: "tool_result",
              callId: "a",
              content: [
                { type: "text", text: "here" },
                { type: "document", source: PDF, title: "a.pdf", context: "c" },
              ],
              isError: false,
            },
            { type: "text", text: "thanks" },
          ],
        },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual((body.messages as unknown[]).slice(2), [
    { role: "tool", content: "here", tool_call_id: "a" },
    {
      role: "user",
      content: [
        {
          type: "file",
          file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
        },
        { type: "text", text: "thanks" },
      ],
    },
  ]);
  assert.deepEqual(dropped, ["context"]);
});

Deno.test("toOpenAIRequest: a document by URL is a 400 naming the field (chat completions take files inline)", () => {
  const url = {
    type: "document",
    source: { kind: "url", url: "https://example.com/a.pdf" },
  } as const;
  const rejects = (messages: Message[], param: string) =>
    assert.throws(
      () => toOpenAIRequest(chatRequest({ messages }), OPTIONS),
      (e) => e instanceof ApiError && e.status === 400 && e.param === param,
    );
  rejects(
    [{ role: "user", parts: [{ type: "text", text: "x" }, url] }],
    "messages[0].content[1].file.file_url",
  );
  rejects(
    [
      { role: "user", parts: [{ type: "text", text: "Go" }] },
      { role: "assistant", parts: [{ type: "tool_call", id: "a", name: "f", arguments: "{}" }] },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          callId: "a",
          content: [{ type: "text", text: "read:" }, url],
          isError: false,
        }],
      },
    ],
    "messages[2].content[0].content[1].file.file_url",
  );
});

Deno.test("toOpenAIRequest: reasoning in the history is left out and reported as reasoning_content", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      messages: [
        { role: "user", parts: [{ type: "text", text: "Hi" }] },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", text: "They greet me.", signature: "sig", style: "anthropic" },
            { type: "reasoning", text: "", redacted: "opaque" },
            { type: "text", text: "Hello!" },
          ],
        },
        { role: "user", parts: [{ type: "text", text: "Again" }] },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual(body.messages, [
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello!" },
    { role: "user", content: "Again" },
  ]);
  assert.deepEqual(dropped, ["reasoning_content"]);
  assert.deepEqual(toOpenAIRequest(chatRequest(), OPTIONS).dropped, []);
});

Deno.test("toOpenAIRequest: every option, under its wire name", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({}, {
      maxTokens: 900,
      maxTokensGiven: true,
      temperature: 0.3,
      topP: 0.9,
      stop: ["END", "STOP"],
      seed: 42,
      frequencyPenalty: 0.5,
      presencePenalty: -0.5,
      reasoning: { effort: "high" },
      output: { type: "json" },
      tools: [WEATHER, { name: "now" }],
      toolChoice: { name: "get_weather" },
      parallelToolCalls: false,
      user: "user-1",
      metadata: { team: "blue" },
    }),
    { ...OPTIONS, maxTokensField: "max_completion_tokens" },
  );
  assert.deepEqual(dropped, []);
  assert.deepEqual(body, {
    model: "gpt-up",
    messages: [{ role: "user", content: "Hello there" }],
    max_completion_tokens: 900,
    temperature: 0.3,
    top_p: 0.9,
    stop: ["END", "STOP"],
    seed: 42,
    frequency_penalty: 0.5,
    presence_penalty: -0.5,
    reasoning_effort: "high",
    response_format: { type: "json_object" },
    tools: [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather in a city",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          strict: true,
        },
      },
      { type: "function", function: { name: "now" } },
    ],
    tool_choice: { type: "function", function: { name: "get_weather" } },
    parallel_tool_calls: false,
    user: "user-1",
    metadata: { team: "blue" },
  });
});

Deno.test("toOpenAIRequest: tool_choice and parallel_tool_calls only beside tools; top_k reported", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({}, { toolChoice: "none", parallelToolCalls: true, topK: 40 }),
    OPTIONS,
  );
  assert.equal("tool_choice" in body || "parallel_tool_calls" in body || "tools" in body, false);
  assert.equal("top_k" in body, false);
  assert.deepEqual(dropped, ["top_k"]);
  for (const choice of ["none", "auto", "required"] as const) {
    const withTools = toOpenAIRequest(
      chatRequest({}, { tools: [WEATHER], toolChoice: choice }),
      OPTIONS,
    );
    assert.equal(withTools.body.tool_choice, choice);
  }
});

Deno.test("toOpenAIRequest: a JSON schema goes as response_format.json_schema, unchanged", () => {
  const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
  const strict = toOpenAIRequest(
    chatRequest({}, {
      output: { type: "json_schema", name: "answer", schema, strict: true, description: "An a" },
    }),
    OPTIONS,
  );
  assert.deepEqual(strict.body.response_format, {
    type: "json_schema",
    json_schema: { name: "answer", description: "An a", schema, strict: true },
  });
  const loose = toOpenAIRequest(
    chatRequest({}, { output: { type: "json_schema", name: "n", schema, strict: false } }),
    OPTIONS,
  );
  assert.deepEqual(loose.body.response_format, {
    type: "json_schema",
    json_schema: { name: "n", schema, strict: false },
  });
  assert.equal("response_format" in toOpenAIRequest(chatRequest(), OPTIONS).body, false);
});

Deno.test("toOpenAIRequest: a thinking budget becomes an effort; thinking off sends none", () => {
  const effort = (reasoning: ReasoningOptions | undefined) =>
    toOpenAIRequest(chatRequest({}, reasoning ? { reasoning } : {}), OPTIONS).body.reasoning_effort;
  assert.equal(effort({ budgetTokens: 1024 }), "low");
  assert.equal(effort({ budgetTokens: 4000 }), "low");
  assert.equal(effort({ budgetTokens: 4096 }), "medium");
  assert.equal(effort({ budgetTokens: 10_000 }), "medium");
  assert.equal(effort({ budgetTokens: 16_384 }), "high");
  assert.equal(effort({ budgetTokens: 31_999 }), "high");
  assert.equal(effort({ effort: "minimal", budgetTokens: 31_999 }), "minimal");
  assert.equal(effort({ disabled: true }), undefined);
  assert.equal(effort({ disabled: true, effort: "low" }), undefined);
  assert.equal(effort({}), undefined);
  assert.equal(effort(undefined), undefined);
});

Deno.test("toOpenAIRequest: chat extras are forwarded as sent, but never over the gateway's own fields", () => {
  const prediction = { type: "content", content: "draft" };
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      extras: {
        protocol: "openai_chat",
        fields: {
          logprobs: true,
          top_logprobs: 2,
          service_tier: "flex",
          store: true,
          prediction,
          logit_bias: { "50256": -100 },
          reasoning_effort: "xhigh",
          model: "sneaky",
          messages: [],
          stream: true,
          stream_options: { include_usage: false },
          max_tokens: 1,
          max_completion_tokens: 1,
        },
      },
    }),
    { ...OPTIONS, stream: true },
  );
  assert.deepEqual(dropped, []);
  assert.deepEqual(body, {
    logprobs: true,
    top_logprobs: 2,
    service_tier: "flex",
    store: true,
    prediction,
    logit_bias: { "50256": -100 },
    reasoning_effort: "xhigh",
    model: "gpt-up",
    messages: [{ role: "user", content: "Hello there" }],
    max_tokens: 256,
    stream: true,
    stream_options: { include_usage: true },
  });
});

Deno.test("toOpenAIRequest: extras of another protocol are left out and reported", () => {
  const { body, dropped } = toOpenAIRequest(
    chatRequest({
      extras: {
        protocol: "anthropic_messages",
        fields: { service_tier: "standard_only", container: "c1" },
      },
    }),
    OPTIONS,
  );
  assert.equal("service_tier" in body || "container" in body, false);
  assert.deepEqual(dropped, ["service_tier", "container"]);
});

Deno.test("toOpenAIRequest: streams always ask for usage; nothing optional is invented", () => {
  const stream = toOpenAIRequest(chatRequest({ stream: true }), { ...OPTIONS, stream: true });
  assert.equal(stream.body.stream, true);
  assert.deepEqual(stream.body.stream_options, { include_usage: true });
  assert.deepEqual(toOpenAIRequest(chatRequest(), OPTIONS).body, {
    model: "gpt-up",
    messages: [{ role: "user", content: "Hello there" }],
    max_tokens: 256,
  });
});

Deno.test("toOpenAIRequest: a system message mid-conversation stays in place", () => {
  const { body } = toOpenAIRequest(
    chatRequest({
      messages: [
        { role: "user", parts: [{ type: "text", text: "one" }] },
        { role: "assistant", parts: [{ type: "text", text: "two" }] },
        { role: "system", parts: [{ type: "text", text: "Tools changed." }] },
        { role: "user", parts: [{ type: "text", text: "three" }] },
      ],
    }),
    OPTIONS,
  );
  assert.deepEqual(body.messages, [
    { role: "user", content: "one" },
    { role: "assistant", content: "two" },
    { role: "system", content: "Tools changed." },
    { role: "user", content: "three" },
  ]);
});
