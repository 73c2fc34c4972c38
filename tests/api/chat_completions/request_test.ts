import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { DEFAULT_IMAGE_CAPS } from "../../../src/config/limits.ts";
import { parseChatRequest } from "../../../src/api/chat_completions/request.ts";
import { reasoningExcluded } from "../../../src/api/chat_completions/reasoning.ts";
import { chatUses } from "../../../src/api/chat_completions/uses.ts";
import { dataUrl, gifBytes, pngBytes } from "../../support/images.ts";

const PNG = dataUrl("image/png", pngBytes(4, 3));
const PNG_BASE64 = PNG.slice("data:image/png;base64,".length);
const PDF_BASE64 = new TextEncoder().encode("%PDF-1.4\n%%EOF\n").toBase64();

function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "m", messages: [{ role: "user", content: "hi" }], ...extra };
}

/** A conversation with one tool round trip, for tests to change. */
function roundTrip(): Record<string, unknown>[] {
  return [
    { role: "user", content: "weather?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "w", arguments: "{}" } },
        { id: "call_2", type: "function", function: { name: "t", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "noon" }] },
  ];
}

/** Asserts a 400 naming `param`, with a message matching `message` and a string code (the
 * given one, or any). */
function rejects(
  input: Record<string, unknown>,
  param: string | null,
  message: RegExp,
  code?: string,
): void {
  assert.throws(() => parseChatRequest(input), (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
    assert.equal(e.status, 400);
    assert.equal(e.type, "invalid_request_error");
    assert.equal(e.param, param, `param for ${JSON.stringify(input).slice(0, 200)}`);
    assert.match(e.message, message);
    assert.equal(typeof e.code, "string", `a code for ${e.message}`);
    if (code !== undefined) assert.equal(e.code, code, e.message);
    return true;
  });
}

Deno.test("parseChatRequest fills the spec's defaults", () => {
  const req = parseChatRequest(body());
  assert.equal(req.model, "m");
  assert.deepEqual(req.messages, [{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
  assert.equal(req.stream, false);
  assert.equal(req.includeUsage, false);
  assert.deepEqual(req.options, {
    maxTokens: 256,
    maxTokensGiven: false,
    stop: [],
    output: { type: "text" },
    tools: [],
    toolChoice: null,
  });
  assert.deepEqual(req.extras, { protocol: "openai_chat", fields: {} });
});

Deno.test("parseChatRequest keeps what was sent, and treats null as not sent", () => {
  const req = parseChatRequest(body({
    temperature: 0,
    max_completion_tokens: 7,
    stream: true,
    stream_options: { include_usage: true },
    stop: "END",
    top_p: 0.5,
    seed: 42,
    presence_penalty: -1,
    frequency_penalty: 2,
    user: "u-1",
    parallel_tool_calls: false,
    metadata: { team: "blue" },
    n: 1,
  }));
  assert.equal(req.stream, true);
  assert.equal(req.includeUsage, true);
  assert.deepEqual(req.options, {
    maxTokens: 7,
    maxTokensGiven: true,
    temperature: 0,
    topP: 0.5,
    seed: 42,
    presencePenalty: -1,
    frequencyPenalty: 2,
    user: "u-1",
    parallelToolCalls: false,
    metadata: { team: "blue" },
    stop: ["END"],
    output: { type: "text" },
    tools: [],
    toolChoice: null,
  });
  assert.deepEqual(req.extras.fields, {});

  const nulls = parseChatRequest(body({
    temperature: null,
    max_tokens: null,
    stream: null,
    stream_options: null,
    stop: null,
    tools: null,
    tool_choice: null,
    n: null,
    top_p: null,
    reasoning_effort: null,
    response_format: null,
    metadata: null,
  }));
  assert.equal(nulls.options.temperature, undefined);
  assert.equal(nulls.options.maxTokens, 256);
  assert.equal(nulls.options.reasoning, undefined);
  assert.equal(
    parseChatRequest(body({ max_tokens: 9, max_completion_tokens: 9 })).options.maxTokens,
    9,
  );
  assert.equal(parseChatRequest(body({ temperature: 1.7 })).options.temperature, 1.7, "as given");
});

Deno.test("parseChatRequest passes fields it does not model in extras, unchanged", () => {
  const unmodelled = {
    logprobs: true,
    top_logprobs: 3,
    service_tier: "flex",
    prediction: { type: "content", content: "abc" },
    store: false,
    modalities: ["text"],
    logit_bias: { "50256": -100 },
    unknown_field: { anything: [1, null] },
  };
  const req = parseChatRequest(body({ ...unmodelled, temperature: 0.3 }));
  assert.deepEqual(req.extras, { protocol: "openai_chat", fields: unmodelled });
});

Deno.test("parseChatRequest accepts every role, content parts, tool calls and their answers", () => {
  const req = parseChatRequest(body({
    messages: [
      { role: "system", content: "Be brief.", name: "sys" },
      { role: "developer", content: [{ type: "text", text: "Use tools." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: PNG, detail: "low" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
        ],
      },
      ...roundTrip(),
      { role: "assistant", content: "It is sunny." },
      { role: "user", content: "thanks" },
    ],
    tools: [
      {
        type: "function",
        function: {
          name: "w",
          description: "weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          strict: true,
        },
      },
      { type: "function", function: { name: "t" } },
    ],
    tool_choice: { type: "function", function: { name: "t" } },
  }));
  assert.equal(req.messages.length, 9);
  assert.deepEqual(req.messages[0], {
    role: "system",
    parts: [{ type: "text", text: "Be brief." }],
    name: "sys",
  });
  assert.deepEqual(req.messages[1], {
    role: "developer",
    parts: [{ type: "text", text: "Use tools." }],
  });
  assert.deepEqual(req.messages[2], {
    role: "user",
    parts: [
      { type: "text", text: "What is this?" },
      {
        type: "image",
        source: { kind: "data", mediaType: "image/png", base64: PNG_BASE64 },
        detail: "low",
      },
      { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
    ],
  });
  assert.deepEqual(req.messages[4], {
    role: "assistant",
    parts: [
      { type: "tool_call", id: "call_1", name: "w", arguments: "{}" },
      { type: "tool_call", id: "call_2", name: "t", arguments: "{}" },
    ],
  });
  assert.deepEqual(req.messages[5], {
    role: "tool",
    parts: [{
      type: "tool_result",
      callId: "call_1",
      content: [{ type: "text", text: "sunny" }],
      isError: false,
    }],
  });
  assert.deepEqual(req.options.tools, [
    {
      name: "w",
      description: "weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
      strict: true,
    },
    { name: "t" },
  ]);
  assert.deepEqual(req.options.toolChoice, { name: "t" });
  const tools = [{ type: "function", function: { name: "t" } }];
  for (const choice of ["none", "auto", "required"]) {
    assert.equal(parseChatRequest(body({ tools, tool_choice: choice })).options.toolChoice, choice);
  }
  // An assistant message may omit content when it has tool calls; "" beside them is no text.
  const noContent = roundTrip();
  delete noContent[1]!.content;
  assert.equal(parseChatRequest(body({ messages: noContent })).messages.length, 4);
  const empty = roundTrip();
  empty[1]!.content = "";
  assert.equal(parseChatRequest(body({ messages: empty })).messages[1]!.parts.length, 2);
});

Deno.test("assistant messages keep refusals, reasoning and thinking blocks as sent back", () => {
  const signed = {
    role: "assistant",
    content: "Let me check.",
    reasoning_content: "The user wants weather. I should call w.",
    thinking_blocks: [
      { type: "thinking", thinking: "The user wants weather. ", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque-2" },
      { type: "thinking", thinking: "I should call w.", signature: "sig-3" },
    ],
    tool_calls: [{ id: "toolu_1", type: "function", function: { name: "w", arguments: "{}" } }],
  };
  const req = parseChatRequest(body({
    messages: [
      { role: "user", content: "weather?" },
      signed,
      { role: "tool", tool_call_id: "toolu_1", content: "rain" },
      { role: "assistant", content: null, refusal: "I can't help with that." },
      { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      { role: "assistant", content: "Sure.", reasoning_content: "Easy one." },
      { role: "user", content: "go on" },
    ],
  }));
  assert.deepEqual(req.messages[1]!.parts, [
    {
      type: "reasoning",
      text: "The user wants weather. ",
      signature: "sig-1",
      style: "anthropic",
    },
    { type: "reasoning", text: "", redacted: "opaque-2", style: "anthropic" },
    { type: "reasoning", text: "I should call w.", signature: "sig-3", style: "anthropic" },
    { type: "text", text: "Let me check." },
    { type: "tool_call", id: "toolu_1", name: "w", arguments: "{}" },
  ]);
  assert.deepEqual(req.messages[3]!.parts, [{ type: "refusal", text: "I can't help with that." }]);
  assert.deepEqual(req.messages[4]!.parts, [{ type: "refusal", text: "No." }]);
  assert.deepEqual(req.messages[5]!.parts, [
    { type: "reasoning", text: "Easy one." },
    { type: "text", text: "Sure." },
  ]);
  const assistant = (extra: Record<string, unknown>) =>
    body({ messages: [{ role: "assistant", content: "x", ...extra }] });
  rejects(assistant({ refusal: 3 }), "messages[0].refusal", /string/, "invalid_type");
  rejects(assistant({ reasoning_content: [] }), "messages[0].reasoning_content", /string/);
  rejects(assistant({ thinking_blocks: {} }), "messages[0].thinking_blocks", /array/);
  rejects(
    assistant({ thinking_blocks: [{ type: "thought" }] }),
    "messages[0].thinking_blocks[0].type",
    /expected "thinking" or "redacted_thinking", but got "thought"/,
    "invalid_value",
  );
  rejects(
    assistant({ thinking_blocks: [{ type: "thinking", signature: "s" }] }),
    "messages[0].thinking_blocks[0].thinking",
    /^Missing required parameter: 'messages\[0\]\.thinking_blocks\[0\]\.thinking'\.$/,
    "missing_required_parameter",
  );
  rejects(
    assistant({ thinking_blocks: [{ type: "redacted_thinking", data: 1 }] }),
    "messages[0].thinking_blocks[0].data",
    /expected a string, but got a number/,
    "invalid_type",
  );
  rejects(
    body({ messages: [{ role: "user", content: [{ type: "refusal", refusal: "x" }] }] }),
    "messages[0].content[0].type",
    /refusal parts are only allowed in assistant messages/,
  );
});

Deno.test("cache_control marks parts, a message's last part, and tools", () => {
  const req = parseChatRequest(body({
    messages: [
      {
        role: "system",
        content: [{ type: "text", text: "Long rules.", cache_control: { type: "ephemeral" } }],
      },
      {
        role: "user",
        content: [{ type: "text", text: "a" }, { type: "image_url", image_url: { url: PNG } }],
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
      ...roundTrip().map((m, i) => i === 2 ? { ...m, cache_control: { type: "ephemeral" } } : m),
      { role: "user", content: "and?", cache_control: { type: "ephemeral", ttl: "5m" } },
    ],
    tools: [{
      type: "function",
      function: { name: "w" },
      cache_control: { type: "ephemeral" },
    }, { type: "function", function: { name: "t" } }],
  }));
  const [system, user, , assistant, tool, , last] = req.messages;
  assert.deepEqual(system!.parts[0], {
    type: "text",
    text: "Long rules.",
    cache: { type: "ephemeral" },
  });
  assert.equal(user!.parts[0]!.type === "text" && user!.parts[0]!.cache, undefined);
  assert.deepEqual((user!.parts[1] as { cache?: unknown }).cache, { type: "ephemeral", ttl: "1h" });
  assert.equal((assistant!.parts[1] as { cache?: unknown }).cache, undefined);
  assert.deepEqual((tool!.parts[0] as { cache?: unknown }).cache, { type: "ephemeral" });
  assert.deepEqual(last!.parts, [{
    type: "text",
    text: "and?",
    cache: { type: "ephemeral", ttl: "5m" },
  }]);
  assert.deepEqual(req.options.tools[0], { name: "w", cache: { type: "ephemeral" } });
  assert.equal(req.options.tools[1]!.cache, undefined);

  const user1 = (cache: unknown) =>
    body({ messages: [{ role: "user", content: "x", cache_control: cache }] });
  rejects(user1("yes"), "messages[0].cache_control", /object/, "invalid_type");
  rejects(
    user1({ type: "persistent" }),
    "messages[0].cache_control.type",
    /"ephemeral"/,
    "invalid_value",
  );
  rejects(user1({}), "messages[0].cache_control.type", /Missing required parameter/);
  rejects(user1({ type: "ephemeral", ttl: "2h" }), "messages[0].cache_control.ttl", /"5m" or "1h"/);
  rejects(
    body({ tools: [{ type: "function", function: { name: "a" }, cache_control: 1 }] }),
    "tools[0].cache_control",
    /object/,
  );
  rejects(
    body({
      messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: [] }] }],
    }),
    "messages[0].content[0].cache_control",
    /object/,
  );
});

Deno.test("reasoning_effort and OpenRouter's reasoning object become reasoning options", () => {
  const reasoning = (extra: Record<string, unknown>) =>
    parseChatRequest(body(extra)).options.reasoning;
  assert.deepEqual(reasoning({ reasoning_effort: "minimal" }), { effort: "minimal" });
  assert.deepEqual(reasoning({ reasoning: { effort: "high" } }), { effort: "high" });
  assert.deepEqual(reasoning({ reasoning_effort: "low", reasoning: { effort: "low" } }), {
    effort: "low",
  });
  assert.deepEqual(reasoning({ reasoning: { max_tokens: 2000 } }), { budgetTokens: 2000 });
  assert.deepEqual(reasoning({ reasoning: { enabled: false } }), { disabled: true });
  assert.deepEqual(reasoning({ reasoning: { enabled: true } }), { effort: "medium" });
  assert.equal(reasoning({ reasoning: {} }), undefined);
  assert.equal(reasoning({ reasoning: { exclude: true } }), undefined);
  assert.equal(reasoningExcluded(body({ reasoning: { effort: "low", exclude: true } })), true);
  assert.equal(reasoningExcluded(body({ reasoning: { effort: "low" } })), false);
  assert.equal(reasoningExcluded(body()), false);

  rejects(
    body({ reasoning_effort: "max" }),
    "reasoning_effort",
    /expected "minimal", "low", "medium" or "high", but got "max"/,
    "invalid_value",
  );
  rejects(body({ reasoning_effort: 2 }), "reasoning_effort", /but got a number/, "invalid_type");
  rejects(body({ reasoning: "high" }), "reasoning", /object/, "invalid_type");
  rejects(body({ reasoning: { effort: "huge" } }), "reasoning.effort", /"medium"/);
  rejects(
    body({ reasoning_effort: "low", reasoning: { effort: "high" } }),
    "reasoning.effort",
    /same effort as 'reasoning_effort'/,
  );
  rejects(
    body({ reasoning: { effort: "low", max_tokens: 100 } }),
    "reasoning.max_tokens",
    /not both/,
  );
  rejects(
    body({ reasoning: { max_tokens: 0 } }),
    "reasoning.max_tokens",
    /an integer of at least 1, but got 0/,
  );
  rejects(
    body({ reasoning: { exclude: "yes" } }),
    "reasoning.exclude",
    /expected a boolean, but got a string/,
  );
  rejects(
    body({ reasoning: { enabled: false, effort: "low" } }),
    "reasoning.enabled",
    /expected true when an effort/,
  );
});

Deno.test("response_format becomes the output format, json_schema checked", () => {
  const output = (format: unknown) =>
    parseChatRequest(body({ response_format: format })).options.output;
  assert.deepEqual(output({ type: "text" }), { type: "text" });
  assert.deepEqual(output({ type: "json_object" }), { type: "json" });
  const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
  assert.deepEqual(
    output({
      type: "json_schema",
      json_schema: { name: "answer", schema, strict: true, description: "The answer." },
    }),
    { type: "json_schema", name: "answer", schema, strict: true, description: "The answer." },
  );
  assert.deepEqual(output({ type: "json_schema", json_schema: { name: "any" } }), {
    type: "json_schema",
    name: "any",
    schema: {},
    strict: false,
  });
  const spec = (s: Record<string, unknown>) =>
    body({ response_format: { type: "json_schema", json_schema: { name: "x", ...s } } });
  rejects(spec({ strict: "yes" }), "response_format.json_schema.strict", /expected a boolean/);
  rejects(spec({ description: 5 }), "response_format.json_schema.description", /string/);
  rejects(spec({ name: "has space" }), "response_format.json_schema.name", /letters, digits/);
  rejects(
    body({ response_format: { type: "json_schema", json_schema: { schema: {} } } }),
    "response_format.json_schema.name",
    /Missing required parameter/,
    "missing_required_parameter",
  );
});

Deno.test("parseChatRequest rejects a bad model or messages, naming the field", () => {
  rejects(
    { messages: [] },
    "model",
    /^Missing required parameter: 'model'\.$/,
    "missing_required_parameter",
  );
  rejects(
    body({ model: 42 }),
    "model",
    /^Invalid type for 'model': expected a string, but got a number\.$/,
    "invalid_type",
  );
  rejects(body({ model: "" }), "model", /non-empty string/, "invalid_value");
  rejects(
    body({ messages: undefined }),
    "messages",
    /^Missing required parameter: 'messages'\.$/,
    "missing_required_parameter",
  );
  rejects(
    body({ messages: "hi" }),
    "messages",
    /^Invalid type for 'messages': expected an array, but got a string\.$/,
    "invalid_type",
  );
  rejects(
    body({ messages: [] }),
    "messages",
    /expected at least 1 item, but got 0/,
    "invalid_value",
  );
  rejects(
    body({ messages: ["hi"] }),
    "messages[0]",
    /expected an object, but got a string/,
    "invalid_type",
  );
  rejects(
    body({ messages: [{ content: "x" }] }),
    "messages[0].role",
    /^Missing required parameter: 'messages\[0\]\.role'\.$/,
    "missing_required_parameter",
  );
  rejects(
    body({ messages: [{ role: "bot", content: "x" }] }),
    "messages[0].role",
    /expected "system", "developer", "user", "assistant" or "tool", but got "bot"/,
    "invalid_value",
  );
  rejects(
    body({ messages: [{ role: "user" }] }),
    "messages[0].content",
    /^Missing required parameter: 'messages\[0\]\.content'\.$/,
    "missing_required_parameter",
  );
  rejects(
    body({ messages: [{ role: "user", content: 5 }] }),
    "messages[0].content",
    /but got a number/,
    "invalid_type",
  );
  rejects(
    body({ messages: [{ role: "user", content: [] }] }),
    "messages[0].content",
    /expected at least 1 item, but got 0/,
    "invalid_value",
  );
  rejects(
    body({ messages: [{ role: "user", content: "a", name: 3 }] }),
    "messages[0].name",
    /expected a string, but got a number/,
    "invalid_type",
  );
  rejects(
    body({ messages: [{ role: "system", content: null }] }),
    "messages[0].content",
    /required/,
  );
  rejects(
    body({ messages: [{ role: "assistant" }] }),
    "messages[0].content",
    /needs 'content' unless it has 'tool_calls' or a 'refusal'/,
    "missing_required_parameter",
  );
});

Deno.test("parseChatRequest rejects bad content parts and images, naming the part", () => {
  const user = (content: unknown) =>
    body({ messages: [{ role: "user", content: "x" }, { role: "user", content }] });
  rejects(
    user(["hi"]),
    "messages[1].content[0]",
    /expected an object, but got a string/,
    "invalid_type",
  );
  rejects(user([{ type: "text" }]), "messages[1].content[0].text", /Missing required parameter/);
  rejects(
    user([{ type: "input_audio" }]),
    "messages[1].content[0].type",
    /expected "text", "image_url" or "file", but got "input_audio"/,
    "invalid_value",
  );
  // A caller's type is never used as a key: not a nested array, not an Object.prototype name.
  let nested: unknown = "text";
  for (let i = 0; i < 5000; i++) nested = [nested];
  rejects(
    user([{ type: nested }]),
    "messages[1].content[0].type",
    /but got an array/,
    "invalid_type",
  );
  rejects(
    user([{ type: "constructor" }]),
    "messages[1].content[0].type",
    /expected "text", "image_url" or "file", but got "constructor"/,
    "invalid_value",
  );
  rejects(
    user([{ text: "x" }]),
    "messages[1].content[0].type",
    /Missing required parameter/,
    "missing_required_parameter",
  );
  rejects(
    user([{ type: "image_url" }]),
    "messages[1].content[0].image_url",
    /Missing required parameter/,
  );
  rejects(
    user([{ type: "image_url", image_url: "x" }]),
    "messages[1].content[0].image_url",
    /object/,
  );
  const url = "messages[1].content[1].image_url.url";
  const image = (u: unknown) =>
    user([{ type: "text", text: "see" }, { type: "image_url", image_url: { url: u } }]);
  rejects(image(undefined), url, /Missing required parameter/);
  rejects(
    image("http://example.com/cat.png"),
    url,
    /https:\/\/ URL, but got a plain http:\/\/ URL/,
    "invalid_image",
  );
  rejects(image("https://exa mple.com/%"), url, /expected a valid URL/, "invalid_image");
  rejects(image("data:image/png;base64,%%%"), url, /valid base64/, "invalid_image");
  rejects(
    image(`data:image/png;base64,${btoa("not an image, just some text")}`),
    url,
    /not a PNG, JPEG, GIF or WebP/,
  );
  rejects(image(dataUrl("image/png", gifBytes(2, 2))), url, /holds a GIF/);
  rejects(
    user([{ type: "image_url", image_url: { url: PNG, detail: "max" } }]),
    "messages[1].content[0].image_url.detail",
    /"auto", "low" or "high"/,
    "invalid_value",
  );
  rejects(
    body({
      messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: PNG } }] }],
    }),
    "messages[0].content[0].type",
    /only allowed in user messages/,
  );
});

Deno.test("parseChatRequest reads file parts as documents, and chatUses records the PDFs", () => {
  const req = parseChatRequest(body({
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Compare these." },
        {
          type: "file",
          file: { file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: "a.pdf" },
          cache_control: { type: "ephemeral" },
        },
        { type: "file", file: { file_data: `data:text/plain;base64,${btoa("notes")}` } },
      ],
    }],
  }));
  assert.deepEqual(req.messages[0]!.parts, [
    { type: "text", text: "Compare these." },
    {
      type: "document",
      source: { kind: "data", mediaType: "application/pdf", base64: PDF_BASE64, pages: 1 },
      title: "a.pdf",
      cache: { type: "ephemeral" },
    },
    { type: "document", source: { kind: "text", text: "notes" } },
  ]);
  const uses = chatUses(req);
  assert.deepEqual(uses.documents, ["messages[0].content[1]"]);
  assert.deepEqual(uses.images, []);
  assert.deepEqual(uses.protocolOnly, []);
});

Deno.test("parseChatRequest rejects bad file parts, naming the field", () => {
  const file = (f: unknown, role = "user") =>
    body({
      messages: [{ role: "user", content: "x" }, { role, content: [{ type: "file", file: f }] }],
    });
  const data = "messages[1].content[0].file.file_data";
  rejects(
    file({ file_id: "file-abc" }),
    "messages[1].content[0].file.file_id",
    /file ids are not supported.*send the file as file_data/,
    "invalid_value",
  );
  rejects(
    file({ filename: "a.pdf" }),
    "messages[1].content[0].file",
    /neither file_data nor file_id/,
    "invalid_value",
  );
  rejects(file("x"), "messages[1].content[0].file", /expected an object/, "invalid_type");
  rejects(file({ file_data: "data:application/pdf;base64,%%%%" }), data, /not valid base64/);
  rejects(
    file({ file_data: `data:application/pdf;base64,${btoa("no pdf")}` }),
    data,
    /%PDF-/,
    "invalid_value",
  );
  rejects(
    file({ file_data: `data:application/msword;base64,${PDF_BASE64}` }),
    data,
    /"application\/msword"/,
  );
  rejects(file({ file_data: "https://example.com/a.pdf" }), data, /base64 data URL/);
  rejects(
    file({ file_data: `data:application/pdf;base64,${PDF_BASE64}` }, "system"),
    "messages[1].content[0].type",
    /file parts are only allowed in user messages, not in system messages/,
  );
});

Deno.test("parseChatRequest holds each image, and all of them, to the image caps", () => {
  const image = (width: number, height: number) => ({
    type: "image_url",
    image_url: { url: dataUrl("image/png", pngBytes(width, height)) },
  });
  const messages = [
    { role: "user", content: [image(100, 100)] },
    { role: "assistant", content: "a picture" },
    {
      role: "user",
      content: [
        { type: "text", text: "and" },
        { type: "image_url", image_url: { url: "https://example.com/huge.png" } },
        image(200, 100),
      ],
    },
  ];
  const tooLarge = (caps: Partial<typeof DEFAULT_IMAGE_CAPS>, param: string, message: RegExp) =>
    assert.throws(
      () => parseChatRequest(body({ messages }), { ...DEFAULT_IMAGE_CAPS, ...caps }),
      (e: unknown) => {
        assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
        assert.deepEqual([e.status, e.type, e.code, e.param], [
          400,
          "invalid_request_error",
          "image_too_large",
          param,
        ]);
        assert.match(e.message, message);
        return true;
      },
    );
  assert.equal(parseChatRequest(body({ messages })).messages.length, 3);
  tooLarge(
    { max_image_pixels: 15_000 },
    "messages[2].content[2].image_url.url",
    /200x100 = 20000 pixels; the limit is 15000 pixels per image/,
  );
  tooLarge(
    { max_request_image_pixels: 25_000 },
    "messages[2].content[2].image_url.url",
    /brings this request's images to 30000 pixels; the limit is 25000 pixels for all images/,
  );
  tooLarge(
    { max_image_bytes: 56 },
    "messages[0].content[0].image_url.url",
    /57 bytes; the limit is 56 bytes per image/,
  );
  tooLarge(
    { max_request_image_bytes: 100 },
    "messages[2].content[2].image_url.url",
    /brings this request's images to 114 bytes; the limit is 100 bytes for all images/,
  );
});

Deno.test("parseChatRequest checks tool calls and that tool messages answer them", () => {
  const change = (edit: (m: Record<string, unknown>[]) => void) => {
    const messages = roundTrip();
    edit(messages);
    return body({ messages });
  };
  // deno-lint-ignore no-explicit-any
  const calls = (m: Record<string, unknown>[]) => m[1]!.tool_calls as any[];
  rejects(
    change((m) => (m[1]!.tool_calls = {})),
    "messages[1].tool_calls",
    /expected an array, but got an object/,
  );
  rejects(
    change((m) => (calls(m)[0].id = 7)),
    "messages[1].tool_calls[0].id",
    /expected a string, but got a number/,
  );
  rejects(
    change((m) => (calls(m)[1].id = "call_1")),
    "messages[1].tool_calls[1].id",
    /unique/,
    "invalid_value",
  );
  rejects(
    change((m) => (calls(m)[0].type = "tool")),
    "messages[1].tool_calls[0].type",
    /"function"/,
  );
  rejects(
    change((m) => (calls(m)[0].function = null)),
    "messages[1].tool_calls[0].function",
    /Missing required parameter/,
  );
  rejects(
    change((m) => (calls(m)[0].function.name = "bad name")),
    "messages[1].tool_calls[0].function.name",
    /letters, digits/,
  );
  rejects(
    change((m) => (calls(m)[0].function.arguments = { a: 1 })),
    "messages[1].tool_calls[0].function.arguments",
    /JSON-encoded/,
    "invalid_type",
  );
  rejects(
    change((m) => delete m[2]!.tool_call_id),
    "messages[2].tool_call_id",
    /Missing required parameter/,
    "missing_required_parameter",
  );
  rejects(
    change((m) => (m[2]!.tool_call_id = "call_9")),
    "messages[2].tool_call_id",
    /expected the id of a tool call in messages\[1\]/,
    "invalid_value",
  );
  rejects(
    change((m) => (m[3]!.tool_call_id = "call_1")),
    "messages[3].tool_call_id",
    /already been answered/,
  );
  rejects(
    change((m) => m.splice(3, 1)),
    "messages[1].tool_calls[1].id",
    /no tool message answering it/,
  );
  rejects(
    change((m) => m.splice(3, 0, { role: "user", content: "wait" })),
    "messages[1].tool_calls[1].id",
    /"call_2"/,
  );
  rejects(
    change((m) => m.splice(1, 1)),
    "messages[1].tool_call_id",
    /does not follow an assistant message with 'tool_calls'/,
  );
  rejects(
    change((m) => (m[2]!.content = [{ type: "image_url", image_url: { url: PNG } }])),
    "messages[2].content[0].type",
    /only allowed in user messages/,
  );
});

Deno.test("parseChatRequest rejects bad sampling and streaming parameters", () => {
  rejects(
    body({ temperature: "hot" }),
    "temperature",
    /^Invalid type for 'temperature': expected a number, but got a string\.$/,
    "invalid_type",
  );
  rejects(
    body({ temperature: 2.5 }),
    "temperature",
    /expected a number from 0 to 2, but got 2\.5/,
    "invalid_value",
  );
  rejects(body({ temperature: -0.1 }), "temperature", /from 0 to 2/);
  rejects(
    body({ max_tokens: 0 }),
    "max_tokens",
    /expected an integer of at least 1, but got 0/,
    "invalid_value",
  );
  rejects(body({ max_tokens: 1.5 }), "max_tokens", /integer/, "invalid_type");
  rejects(body({ max_tokens: "10" }), "max_tokens", /integer/);
  rejects(body({ max_completion_tokens: -3 }), "max_completion_tokens", /at least 1/);
  rejects(
    body({ max_tokens: 5, max_completion_tokens: 6 }),
    "max_completion_tokens",
    /expected the same as 'max_tokens' \(5\), but got 6/,
  );
  rejects(
    body({ stream: "yes" }),
    "stream",
    /expected a boolean, but got a string/,
    "invalid_type",
  );
  rejects(
    body({ stream_options: { include_usage: true } }),
    "stream_options",
    /only allowed when 'stream' is true/,
    "invalid_value",
  );
  rejects(
    body({ stream: true, stream_options: [] }),
    "stream_options",
    /expected an object, but got an array/,
  );
  rejects(
    body({ stream: true, stream_options: { include_usage: 1 } }),
    "stream_options.include_usage",
    /expected a boolean/,
  );
  rejects(body({ stop: 5 }), "stop", /string or an array/);
  rejects(body({ stop: ["a", "b", "c", "d", "e"] }), "stop", /at most 4/);
  rejects(body({ stop: ["a", 3] }), "stop[1]", /expected a string, but got a number/);
  rejects(body({ stop: "" }), "stop", /empty/);
  rejects(body({ n: 2 }), "n", /expected 1/, "invalid_value");
  rejects(body({ top_p: 1.5 }), "top_p", /from 0 to 1/);
  rejects(body({ seed: 1.5 }), "seed", /integer/);
  rejects(body({ presence_penalty: 3 }), "presence_penalty", /from -2 to 2/);
  rejects(body({ frequency_penalty: "x" }), "frequency_penalty", /number/);
  rejects(body({ user: 1 }), "user", /string/, "invalid_type");
  rejects(body({ parallel_tool_calls: "no" }), "parallel_tool_calls", /expected a boolean/);
  rejects(body({ metadata: [] }), "metadata", /object/, "invalid_type");
  rejects(
    body({ metadata: { a: 1 } }),
    "metadata.a",
    /expected a string, but got a number/,
    "invalid_type",
  );
  rejects(body({ metadata: { a: "x".repeat(513) } }), "metadata.a", /at most 512/);
  rejects(
    body({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }),
    "metadata",
    /at most 16 pairs/,
  );
  rejects(body({ logit_bias: { abc: 1 } }), "logit_bias.abc", /expected a token id as the key/);
  rejects(body({ logit_bias: { "12": 101 } }), "logit_bias.12", /-100 to 100/);
  rejects(body({ response_format: "json" }), "response_format", /object/);
  rejects(body({ response_format: { type: "xml" } }), "response_format.type", /"json_schema"/);
  rejects(
    body({ response_format: { type: "json_schema" } }),
    "response_format.json_schema",
    /Missing required parameter/,
  );
  rejects(
    body({ response_format: { type: "json_schema", json_schema: { name: "x", schema: 1 } } }),
    "response_format.json_schema.schema",
    /JSON schema/,
  );
});

Deno.test("parseChatRequest checks tools and tool_choice", () => {
  const fn = (f: unknown) => body({ tools: [{ type: "function", function: f }] });
  rejects(body({ tools: {} }), "tools", /expected an array, but got an object/, "invalid_type");
  rejects(
    body({ tools: Array(129).fill({ type: "function", function: { name: "a" } }) }),
    "tools",
    /at most 128/,
    "invalid_value",
  );
  rejects(body({ tools: ["x"] }), "tools[0]", /expected an object/);
  rejects(
    body({ tools: [{ function: { name: "a" } }] }),
    "tools[0].type",
    /Missing required parameter: 'tools\[0\]\.type'/,
    "missing_required_parameter",
  );
  rejects(
    body({ tools: [{ type: "function" }] }),
    "tools[0].function",
    /Missing required parameter/,
  );
  rejects(
    fn({}),
    "tools[0].function.name",
    /Missing required parameter/,
    "missing_required_parameter",
  );
  rejects(fn({ name: "has space" }), "tools[0].function.name", /"has space"/, "invalid_value");
  rejects(fn({ name: "x".repeat(65) }), "tools[0].function.name", /1 to 64/);
  rejects(fn({ name: "a", description: 1 }), "tools[0].function.description", /string/);
  rejects(
    fn({ name: "a", parameters: "{}" }),
    "tools[0].function.parameters",
    /JSON schema object/,
  );
  rejects(
    fn({ name: "a", parameters: { type: "string" } }),
    "tools[0].function.parameters.type",
    /"object"/,
  );
  rejects(
    fn({ name: "a", parameters: { type: "object", properties: [] } }),
    "tools[0].function.parameters.properties",
    /object/,
  );
  rejects(
    fn({ name: "a", parameters: { type: "object", required: "x" } }),
    "tools[0].function.parameters.required",
    /array/,
  );
  rejects(fn({ name: "a", strict: "yes" }), "tools[0].function.strict", /expected a boolean/);
  rejects(
    body({
      tools: [{ type: "function", function: { name: "a" } }, {
        type: "function",
        function: { name: "a" },
      }],
    }),
    "tools[1].function.name",
    /a name no other tool has, but got "a" \(also tools\[0\]\)/,
  );
  const tools = [{ type: "function", function: { name: "a" } }];
  rejects(body({ tool_choice: "required" }), "tool_choice", /"required" needs tools/);
  rejects(
    body({ tools, tool_choice: "always" }),
    "tool_choice",
    /expected "none", "auto" or "required", but got "always"/,
  );
  rejects(body({ tools, tool_choice: 3 }), "tool_choice", /"none"/, "invalid_type");
  rejects(
    body({ tools, tool_choice: { type: "allowed_tools" } }),
    "tool_choice.type",
    /"function"/,
  );
  rejects(
    body({ tools, tool_choice: { type: "function" } }),
    "tool_choice.function",
    /Missing required parameter/,
  );
  rejects(
    body({ tools, tool_choice: { type: "function", function: { name: "b" } } }),
    "tool_choice.function.name",
    /expected the name of one of the tools/,
  );
  assert.deepEqual(parseChatRequest(body({ tools: [] })).options.tools, []);
  assert.equal(parseChatRequest(body({ tool_choice: "none" })).options.toolChoice, "none");
});
