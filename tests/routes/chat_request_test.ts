import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { DEFAULT_IMAGE_CAPS } from "../../src/config.ts";
import { parseChatRequest } from "../../src/routes/chat_request.ts";
import { dataUrl, gifBytes, pngBytes } from "../support/images.ts";

const PNG = dataUrl("image/png", pngBytes(4, 3));

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

function rejects(input: Record<string, unknown>, param: string | null, message: RegExp): void {
  assert.throws(() => parseChatRequest(input), (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
    assert.equal(e.status, 400);
    assert.equal(e.type, "invalid_request_error");
    assert.equal(e.param, param, `param for ${JSON.stringify(input).slice(0, 200)}`);
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("parseChatRequest fills the spec's defaults", () => {
  const req = parseChatRequest(body());
  assert.equal(req.model, "m");
  assert.deepEqual(req.messages, [{ role: "user", content: "hi" }]);
  assert.equal(req.temperature, 1);
  assert.equal(req.max_tokens, 256);
  assert.equal(req.stream, false);
  assert.equal(req.include_usage, false);
  assert.deepEqual(req.stop, []);
  assert.deepEqual(req.tools, []);
  assert.equal(req.tool_choice, null);
  assert.equal(req.max_tokens_given, false);
  assert.equal(req.temperature_given, false);
  assert.deepEqual(req.extra, {});
});

/** The OpenAI sampling fields that reach OpenAI-style upstreams as sent. */
const PASSED_THROUGH = {
  top_p: 0.5,
  seed: 42,
  presence_penalty: -1,
  frequency_penalty: 2,
  user: "u-1",
  parallel_tool_calls: false,
  logit_bias: { "50256": -100 },
  response_format: { type: "json_object" },
};

Deno.test("parseChatRequest keeps what was sent, and treats null as not sent", () => {
  const req = parseChatRequest(body({
    temperature: 0,
    max_completion_tokens: 7,
    stream: true,
    stream_options: { include_usage: true },
    stop: "END",
    ...PASSED_THROUGH,
    n: 1,
    unknown_field: { anything: true },
  }));
  assert.equal(req.temperature, 0);
  assert.equal(req.temperature_given, true);
  assert.equal(req.max_tokens, 7);
  assert.equal(req.max_tokens_given, true);
  assert.equal(req.stream, true);
  assert.equal(req.include_usage, true);
  assert.deepEqual(req.stop, ["END"]);
  assert.deepEqual(req.extra, PASSED_THROUGH);
  assert.ok(!("unknown_field" in req.extra));

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
  }));
  assert.equal(nulls.temperature, 1);
  assert.equal(nulls.max_tokens, 256);
  assert.deepEqual(nulls.extra, {});
  assert.equal(parseChatRequest(body({ max_tokens: 9, max_completion_tokens: 9 })).max_tokens, 9);
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
  assert.deepEqual(req.messages[0], { role: "system", content: "Be brief.", name: "sys" });
  assert.deepEqual(req.messages[2], {
    role: "user",
    content: [
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: PNG, detail: "low" } },
    ],
  });
  assert.deepEqual(req.messages[4], {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "w", arguments: "{}" } },
      { id: "call_2", type: "function", function: { name: "t", arguments: "{}" } },
    ],
  });
  assert.deepEqual(req.messages[5], { role: "tool", tool_call_id: "call_1", content: "sunny" });
  assert.equal(req.tools.length, 2);
  assert.equal(req.tools[0]!.function.strict, true);
  assert.deepEqual(req.tool_choice, { type: "function", function: { name: "t" } });
  for (const choice of ["none", "auto", "required"]) {
    assert.equal(
      parseChatRequest(body({ tools: req.tools, tool_choice: choice })).tool_choice,
      choice,
    );
  }
  // An assistant message may omit content when it has tool calls.
  const noContent = roundTrip();
  delete noContent[1]!.content;
  assert.equal(parseChatRequest(body({ messages: noContent })).messages.length, 4);
});

Deno.test("parseChatRequest rejects a bad model or messages, naming the field", () => {
  rejects({ messages: [] }, "model", /must provide a model/);
  rejects(body({ model: 42 }), "model", /non-empty string, not the number 42/);
  rejects(body({ model: "" }), "model", /non-empty string/);
  rejects(body({ messages: undefined }), "messages", /must provide `messages`/);
  rejects(body({ messages: "hi" }), "messages", /must be an array/);
  rejects(body({ messages: [] }), "messages", /at least one message/);
  rejects(body({ messages: ["hi"] }), "messages[0]", /must be an object/);
  rejects(body({ messages: [{ content: "x" }] }), "messages[0].role", /it is missing/);
  rejects(body({ messages: [{ role: "bot", content: "x" }] }), "messages[0].role", /not "bot"/);
  rejects(body({ messages: [{ role: "user" }] }), "messages[0].content", /is required/);
  rejects(
    body({ messages: [{ role: "user", content: 5 }] }),
    "messages[0].content",
    /not the number 5/,
  );
  rejects(
    body({ messages: [{ role: "user", content: [] }] }),
    "messages[0].content",
    /empty array/,
  );
  rejects(
    body({ messages: [{ role: "user", content: "a", name: 3 }] }),
    "messages[0].name",
    /must be a string/,
  );
  rejects(
    body({ messages: [{ role: "system", content: null }] }),
    "messages[0].content",
    /required/,
  );
  rejects(
    body({ messages: [{ role: "assistant" }] }),
    "messages[0].content",
    /unless the assistant/,
  );
});

Deno.test("parseChatRequest rejects bad content parts and images, naming the part", () => {
  const user = (content: unknown) =>
    body({ messages: [{ role: "user", content: "x" }, { role: "user", content }] });
  rejects(user(["hi"]), "messages[1].content[0]", /content part object/);
  rejects(user([{ type: "text" }]), "messages[1].content[0].text", /must be a string/);
  rejects(
    user([{ type: "input_audio" }]),
    "messages[1].content[0].type",
    /"text" or "image_url", not "input_audio"/,
  );
  rejects(user([{ text: "x" }]), "messages[1].content[0].type", /it is missing/);
  rejects(
    user([{ type: "image_url" }]),
    "messages[1].content[0].image_url",
    /must be an object with a `url`/,
  );
  rejects(
    user([{ type: "image_url", image_url: "x" }]),
    "messages[1].content[0].image_url",
    /object/,
  );
  const url = "messages[1].content[1].image_url.url";
  const image = (u: unknown) =>
    user([{ type: "text", text: "see" }, { type: "image_url", image_url: { url: u } }]);
  rejects(image(undefined), url, /must be a string/);
  rejects(image("https://example.com/cat.png"), url, /Remote image URLs are not fetched/);
  rejects(image("data:image/png;base64,%%%"), url, /valid base64/);
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
  );
  rejects(
    body({
      messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: PNG } }] }],
    }),
    "messages[0].content[0].type",
    /only allowed in user messages/,
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
    { role: "user", content: [{ type: "text", text: "and" }, image(200, 100)] },
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
    "messages[2].content[1].image_url.url",
    /200x100 = 20000 pixels; the limit is 15000 pixels per image/,
  );
  tooLarge(
    { max_request_image_pixels: 25_000 },
    "messages[2].content[1].image_url.url",
    /brings this request's images to 30000 pixels; the limit is 25000 pixels for all images/,
  );
  tooLarge(
    { max_image_bytes: 56 },
    "messages[0].content[0].image_url.url",
    /57 bytes; the limit is 56 bytes per image/,
  );
  tooLarge(
    { max_request_image_bytes: 100 },
    "messages[2].content[1].image_url.url",
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
  rejects(change((m) => (m[1]!.tool_calls = {})), "messages[1].tool_calls", /array of tool calls/);
  rejects(change((m) => (calls(m)[0].id = 7)), "messages[1].tool_calls[0].id", /non-empty string/);
  rejects(change((m) => (calls(m)[1].id = "call_1")), "messages[1].tool_calls[1].id", /unique/);
  rejects(
    change((m) => (calls(m)[0].type = "tool")),
    "messages[1].tool_calls[0].type",
    /"function"/,
  );
  rejects(
    change((m) => (calls(m)[0].function = null)),
    "messages[1].tool_calls[0].function",
    /object/,
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
  );
  rejects(change((m) => delete m[2]!.tool_call_id), "messages[2].tool_call_id", /it is missing/);
  rejects(
    change((m) => (m[2]!.tool_call_id = "call_9")),
    "messages[2].tool_call_id",
    /not the id of any tool call in messages\[1\]/,
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
    /does not follow an assistant message with `tool_calls`/,
  );
  rejects(
    change((m) => (m[2]!.content = [{ type: "image_url", image_url: { url: PNG } }])),
    "messages[2].content[0].type",
    /only allowed in user messages/,
  );
});

Deno.test("parseChatRequest rejects bad sampling and streaming parameters", () => {
  rejects(body({ temperature: "hot" }), "temperature", /must be a number/);
  rejects(body({ temperature: 2.5 }), "temperature", /between 0 and 2, not 2.5/);
  rejects(body({ temperature: -0.1 }), "temperature", /between 0 and 2/);
  rejects(body({ max_tokens: 0 }), "max_tokens", /positive integer/);
  rejects(body({ max_tokens: 1.5 }), "max_tokens", /integer/);
  rejects(body({ max_tokens: "10" }), "max_tokens", /integer/);
  rejects(body({ max_completion_tokens: -3 }), "max_completion_tokens", /positive/);
  rejects(body({ max_tokens: 5, max_completion_tokens: 6 }), "max_completion_tokens", /disagree/);
  rejects(body({ stream: "yes" }), "stream", /true or false/);
  rejects(
    body({ stream_options: { include_usage: true } }),
    "stream_options",
    /only allowed when `stream` is true/,
  );
  rejects(body({ stream: true, stream_options: [] }), "stream_options", /must be an object/);
  rejects(
    body({ stream: true, stream_options: { include_usage: 1 } }),
    "stream_options.include_usage",
    /true or false/,
  );
  rejects(body({ stop: 5 }), "stop", /string or an array/);
  rejects(body({ stop: ["a", "b", "c", "d", "e"] }), "stop", /at most 4/);
  rejects(body({ stop: ["a", 3] }), "stop[1]", /must be a string/);
  rejects(body({ stop: "" }), "stop", /empty/);
  rejects(body({ n: 2 }), "n", /must be 1/);
  rejects(body({ top_p: 1.5 }), "top_p", /between 0 and 1/);
  rejects(body({ seed: 1.5 }), "seed", /integer/);
  rejects(body({ presence_penalty: 3 }), "presence_penalty", /between -2 and 2/);
  rejects(body({ frequency_penalty: "x" }), "frequency_penalty", /number/);
  rejects(body({ user: 1 }), "user", /string/);
  rejects(body({ parallel_tool_calls: "no" }), "parallel_tool_calls", /true or false/);
  rejects(body({ logit_bias: { abc: 1 } }), "logit_bias.abc", /token ids/);
  rejects(body({ logit_bias: { "12": 101 } }), "logit_bias.12", /-100 to 100/);
  rejects(body({ response_format: "json" }), "response_format", /object/);
  rejects(body({ response_format: { type: "xml" } }), "response_format.type", /"json_schema"/);
  rejects(
    body({ response_format: { type: "json_schema" } }),
    "response_format.json_schema",
    /name/,
  );
  rejects(
    body({ response_format: { type: "json_schema", json_schema: { name: "x", schema: 1 } } }),
    "response_format.json_schema.schema",
    /JSON schema/,
  );
});

Deno.test("parseChatRequest checks tools and tool_choice", () => {
  const fn = (f: unknown) => body({ tools: [{ type: "function", function: f }] });
  rejects(body({ tools: {} }), "tools", /array of tools/);
  rejects(
    body({ tools: Array(129).fill({ type: "function", function: { name: "a" } }) }),
    "tools",
    /at most 128/,
  );
  rejects(body({ tools: ["x"] }), "tools[0]", /must be an object/);
  rejects(
    body({ tools: [{ function: { name: "a" } }] }),
    "tools[0].type",
    /"function" \(it is missing\)/,
  );
  rejects(body({ tools: [{ type: "function" }] }), "tools[0].function", /must be an object/);
  rejects(fn({}), "tools[0].function.name", /letters, digits/);
  rejects(fn({ name: "has space" }), "tools[0].function.name", /"has space"/);
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
  rejects(fn({ name: "a", strict: "yes" }), "tools[0].function.strict", /true or false/);
  rejects(
    body({
      tools: [{ type: "function", function: { name: "a" } }, {
        type: "function",
        function: { name: "a" },
      }],
    }),
    "tools[1].function.name",
    /already used by tools\[0\]/,
  );
  const tools = [{ type: "function", function: { name: "a" } }];
  rejects(body({ tool_choice: "required" }), "tool_choice", /needs `tools`/);
  rejects(body({ tools, tool_choice: "always" }), "tool_choice", /"none", "auto", "required"/);
  rejects(
    body({ tools, tool_choice: { type: "allowed_tools" } }),
    "tool_choice.type",
    /"function"/,
  );
  rejects(body({ tools, tool_choice: { type: "function" } }), "tool_choice.function", /object/);
  rejects(
    body({ tools, tool_choice: { type: "function", function: { name: "b" } } }),
    "tool_choice.function.name",
    /not the name of any tool/,
  );
  assert.deepEqual(parseChatRequest(body({ tools: [] })).tools, []);
  assert.equal(parseChatRequest(body({ tool_choice: "none" })).tool_choice, "none");
});
