import assert from "node:assert/strict";
import { parseMessagesRequest } from "../../../src/api/messages/request.ts";
import { ApiError } from "../../../src/errors.ts";
import { pngBytes } from "../../support/images.ts";

const PNG_1X1_BASE64 = pngBytes(1, 1).toBase64();
const PDF_BASE64 = new TextEncoder().encode("%PDF-1.4\n%%EOF\n").toBase64();
const PDF_SOURCE = { type: "base64", media_type: "application/pdf", data: PDF_BASE64 };

const BASE = { model: "m", max_tokens: 100 };

Deno.test("parseMessagesRequest: system, every block type and cache_control become canonical parts", () => {
  const { req, uses } = parseMessagesRequest({
    ...BASE,
    system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } }],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Look", citations: null },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: PNG_1X1_BASE64 },
          },
          { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I look.", signature: "sig-anthropic" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "thinking", thinking: "Mine.", signature: "switchyard.reasoning.simulator" },
          { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
        ],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          is_error: true,
          content: [{ type: "text", text: "boom" }],
        }],
      },
    ],
    cache_control: { type: "ephemeral" },
  });
  assert.deepEqual(req.messages[0], {
    role: "system",
    parts: [{ type: "text", text: "Be brief.", cache: { type: "ephemeral", ttl: "1h" } }],
  });
  const user = req.messages[1]!.parts;
  assert.equal(user[1]!.type === "image" && user[1]!.source.kind, "data");
  assert.deepEqual(user[2], {
    type: "image",
    source: { kind: "url", url: "https://example.com/a.png" },
  });
  assert.deepEqual(req.messages[2]!.parts, [
    { type: "reasoning", text: "I look.", signature: "sig-anthropic", style: "anthropic" },
    { type: "reasoning", text: "", redacted: "opaque", style: "anthropic" },
    { type: "reasoning", text: "Mine.", style: "simulator" },
    { type: "tool_call", id: "toolu_1", name: "f", arguments: '{"a":1}' },
  ]);
  assert.deepEqual(req.messages[3]!.parts, [{
    type: "tool_result",
    callId: "toolu_1",
    isError: true,
    content: [{ type: "text", text: "boom" }],
    // The top-level cache_control marks the last block.
    cache: { type: "ephemeral" },
  }]);
  assert.deepEqual(uses.images, ["messages[0].content[1]", "messages[0].content[2]"]);
  assert.deepEqual(uses.toolUses, ["messages[1].content[3]", "messages[2].content[0]"]);
  assert.equal(req.extras.protocol, "anthropic_messages");
  assert.deepEqual(req.extras.fields, {});
});

Deno.test("parseMessagesRequest: options, tools, tool_choice, thinking and output_config", () => {
  const { req, uses } = parseMessagesRequest({
    ...BASE,
    max_tokens: 4000,
    messages: [{ role: "user", content: "hi" }],
    stop_sequences: ["END"],
    temperature: 0.5,
    top_p: 0.9,
    top_k: 5,
    metadata: { user_id: "u1" },
    tools: [
      {
        name: "f",
        description: "d",
        input_schema: { type: "object" },
        cache_control: { type: "ephemeral" },
      },
      { type: "web_search_20250305", name: "web_search" },
    ],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    thinking: { type: "enabled", budget_tokens: 2048 },
    output_config: { effort: "max", format: { type: "json_schema", schema: { type: "object" } } },
    service_tier: "auto",
    stream: true,
  });
  const o = req.options;
  assert.deepEqual([o.maxTokens, o.maxTokensGiven, o.stop, o.temperature, o.topP, o.topK, o.user], [
    4000,
    true,
    ["END"],
    0.5,
    0.9,
    5,
    "u1",
  ]);
  assert.deepEqual(o.tools, [{
    name: "f",
    description: "d",
    parameters: { type: "object" },
    cache: { type: "ephemeral" },
  }]);
  assert.deepEqual(uses.hostedTools, [{ path: "tools[1].type", type: "web_search_20250305" }]);
  assert.deepEqual(uses.protocolOnly, []);
  assert.equal(o.toolChoice, "required");
  assert.equal(o.parallelToolCalls, false);
  assert.deepEqual(o.reasoning, { effort: "high", budgetTokens: 2048 });
  assert.deepEqual(o.output, {
    type: "json_schema",
    name: "output",
    schema: { type: "object" },
    strict: true,
  });
  assert.equal(req.stream, true);
  assert.deepEqual(req.extras.fields, { service_tier: "auto" });
  const off = parseMessagesRequest({
    ...BASE,
    messages: [{ role: "user", content: "hi" }],
    thinking: { type: "disabled" },
  });
  assert.deepEqual(off.req.options.reasoning, { disabled: true });
});

Deno.test("parseMessagesRequest: count_tokens bodies need no max_tokens", () => {
  const { req } = parseMessagesRequest(
    { model: "m", messages: [{ role: "user", content: "hi" }] },
    undefined,
    true,
  );
  assert.equal(req.options.maxTokensGiven, false);
});

Deno.test("parseMessagesRequest: each mistake is a 400 naming its path", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ model: "m", messages: [{ role: "user", content: "hi" }] }, "max_tokens"],
    [{ ...BASE, max_tokens: 0, messages: [{ role: "user", content: "hi" }] }, "max_tokens"],
    [
      { ...BASE, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
      "messages[0].content[0].text",
    ],
    [{
      ...BASE,
      messages: [{ role: "user", content: [{ type: "tool_use", id: "a", name: "f", input: {} }] }],
    }, "messages[0].content[0].type"],
    [{
      ...BASE,
      messages: [{
        role: "assistant",
        content: [{ type: "tool_use", id: "a", name: "f", input: [] }],
      }],
    }, "messages[0].content[0].input"],
    [{
      ...BASE,
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "ftp://x" } }],
      }],
    }, "messages[0].content[0].source.url"],
    [{ ...BASE, messages: [{ role: "user", content: "hi" }], top_k: -1 }, "top_k"],
    [
      { ...BASE, messages: [{ role: "user", content: "hi" }], metadata: { user: "x" } },
      "metadata.user",
    ],
    [
      { ...BASE, messages: [{ role: "user", content: "hi" }], tool_choice: { type: "any" } },
      "tool_choice.type",
    ],
    [{
      ...BASE,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "f", input_schema: { type: "object" } }, {
        name: "f",
        input_schema: { type: "object" },
      }],
    }, "tools[1].name"],
    [
      { ...BASE, messages: [{ role: "user", content: "hi" }], stop_sequences: "END" },
      "stop_sequences",
    ],
    [{
      ...BASE,
      messages: [{ role: "user", content: "hi" }],
      output_config: { format: { type: "json_object" } },
    }, "output_config.format.type"],
  ];
  for (const [body, param] of cases) {
    assert.throws(
      () => parseMessagesRequest(body),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.param === param,
      `${JSON.stringify(body)} → ${param}`,
    );
  }
});

Deno.test("parseMessagesRequest: document blocks are documents, in messages and in tool results", () => {
  const { req, uses } = parseMessagesRequest({
    ...BASE,
    messages: [
      {
        role: "user",
        content: [
          {
            type: "document",
            source: PDF_SOURCE,
            title: "Report",
            context: "Q3 figures",
            citations: { enabled: true },
            cache_control: { type: "ephemeral" },
          },
          {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: "plain words" },
            title: null,
            context: null,
          },
          { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
          { type: "document", source: { type: "file", file_id: "file_1" } },
          { type: "document", source: { type: "content", content: "x" } },
          { type: "text", text: "Summarize." },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read", input: {} }] },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "t1",
          content: [
            { type: "text", text: "The file:" },
            { type: "document", source: PDF_SOURCE, citations: { enabled: false } },
          ],
        }],
      },
    ],
  });
  const pdf = { kind: "data", mediaType: "application/pdf", base64: PDF_BASE64, pages: 1 };
  assert.deepEqual(req.messages[0]!.parts, [
    {
      type: "document",
      source: pdf,
      title: "Report",
      context: "Q3 figures",
      citations: true,
      cache: { type: "ephemeral" },
    },
    { type: "document", source: { kind: "text", text: "plain words" } },
    { type: "document", source: { kind: "url", url: "https://example.com/a.pdf" } },
    { type: "text", text: "Summarize." },
  ]);
  assert.deepEqual(req.messages[2]!.parts, [{
    type: "tool_result",
    callId: "t1",
    isError: false,
    content: [
      { type: "text", text: "The file:" },
      { type: "document", source: pdf, citations: false },
    ],
  }]);
  assert.deepEqual(uses.documents, [
    "messages[0].content[0]",
    "messages[0].content[2]",
    "messages[2].content[0].content[1]",
  ]);
  assert.deepEqual(uses.images, []);
  // Sources only Anthropic takes are named by the source's type.
  assert.deepEqual(uses.protocolOnly, [
    { path: "messages[0].content[3].source.type", type: "document (file source)" },
    { path: "messages[0].content[4].source.type", type: "document (content source)" },
  ]);
});

Deno.test("parseMessagesRequest: each bad document is a 400 naming its field", () => {
  const doc = (block: Record<string, unknown>, role = "user") => ({
    ...BASE,
    messages: [{ role, content: [{ type: "document", ...block }] }],
  });
  const pdf = (data: string) => doc({ source: { ...PDF_SOURCE, data } });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [pdf("%%%%"), "messages[0].content[0].source.data", /not valid base64/],
    [pdf(""), "messages[0].content[0].source.data", /empty string/],
    [pdf(btoa("not a pdf")), "messages[0].content[0].source.data", /%PDF-/],
    [
      doc({ source: { ...PDF_SOURCE, media_type: "image/png" } }),
      "messages[0].content[0].source.media_type",
      /"application\/pdf"/,
    ],
    [
      doc({ source: { type: "text", media_type: "text/html", data: "<p>" } }),
      "messages[0].content[0].source.media_type",
      /"text\/plain"/,
    ],
    [
      doc({ source: { type: "url", url: "http://example.com/a.pdf" } }),
      "messages[0].content[0].source.url",
      /plain http:\/\/ URL/,
    ],
    [
      doc({ source: { type: "url", url: "a.pdf" } }),
      "messages[0].content[0].source.url",
      /https:\/\/ URL/,
    ],
    [doc({ source: { type: "s3" } }), "messages[0].content[0].source.type", /"base64"/],
    [doc({ source: PDF_SOURCE, title: 3 }), "messages[0].content[0].title", /string/],
    [
      doc({ source: PDF_SOURCE, citations: { enabled: "yes" } }),
      "messages[0].content[0].citations.enabled",
      /boolean/,
    ],
    [doc({ source: PDF_SOURCE }, "assistant"), "messages[0].content[0].type", /user messages/],
  ];
  for (const [body, param, words] of cases) {
    assert.throws(
      () => parseMessagesRequest(body),
      (e: unknown) =>
        e instanceof ApiError && e.status === 400 && e.param === param && words.test(e.message),
      `${JSON.stringify(body)} → ${param}`,
    );
  }
});

Deno.test("parseMessagesRequest: tool_use and tool_result blocks pair up, message by message", () => {
  const call = (...ids: string[]) => ({
    role: "assistant",
    content: ids.map((id) => ({ type: "tool_use", id, name: "f", input: {} })),
  });
  const result = (...ids: string[]) => ({
    role: "user",
    content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "ok" })),
  });
  const hi = { role: "user", content: "hi" };
  // Answered in any order.
  parseMessagesRequest({ ...BASE, messages: [hi, call("t1", "t2"), result("t2", "t1")] });
  const cases: [unknown[], string, RegExp][] = [
    [[hi, call("t1"), result("t2")], "messages[2].content[0].tool_use_id", /previous message/],
    [[call("t1"), hi, result("t1")], "messages[0]", /immediately after: t1\b/],
    [[hi, call("t1", "t2"), result("t1")], "messages[1]", /immediately after: t2\b/],
    [[hi, call("t1", "t1"), result("t1")], "messages[1].content[1].id", /must be unique/],
    [[hi, call("t1"), result("t1", "t1")], "messages[2].content[1].tool_use_id", /single result/],
  ];
  for (const [messages, param, words] of cases) {
    assert.throws(
      () => parseMessagesRequest({ ...BASE, messages }),
      (e: unknown) => e instanceof ApiError && e.param === param && words.test(e.message),
      `${JSON.stringify(messages)} → ${param}`,
    );
  }
});

Deno.test("parseMessagesRequest: a system message mid-conversation is a canonical system message at its place", () => {
  const { req, dropped } = parseMessagesRequest({
    ...BASE,
    system: "Top.",
    messages: [
      { role: "user", content: "one" },
      { role: "system", content: [{ type: "text", text: "Tools changed." }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
      // A system message between a call and its result: tool pairing looks through it.
      { role: "system", content: "Between." },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
      { role: "system", content: "Shown once.", clear_at: "next_user_message" },
      { role: "system", output_config: { effort: "low" } },
      { role: "user", content: "two" },
      { role: "system", content: "Still shown.", clear_at: "next_user_message" },
    ],
  });
  assert.deepEqual(
    req.messages.map((m) => [m.role, m.parts.map((p) => p.type === "text" ? p.text : p.type)]),
    [
      ["system", ["Top."]],
      ["user", ["one"]],
      ["system", ["Tools changed."]],
      ["assistant", ["tool_call"]],
      ["system", ["Between."]],
      ["user", ["tool_result"]],
      ["user", ["two"]],
      ["system", ["Still shown."]],
    ],
  );
  assert.deepEqual([...dropped], ["messages.output_config"]);
});

Deno.test("parseMessagesRequest: tool changes in a system message and Anthropic-only tool fields are named, never refused", () => {
  const { req, uses, dropped } = parseMessagesRequest({
    ...BASE,
    messages: [
      { role: "user", content: "hi" },
      {
        role: "system",
        content: [
          { type: "tool_addition", tool: { type: "tool_reference", name: "later" } },
          { type: "tool_removal", tool: { type: "tool_reference", name: "f" } },
        ],
      },
    ],
    tools: [
      { name: "f", input_schema: { type: "object" }, eager_input_streaming: true },
      {
        name: "later",
        input_schema: { type: "object" },
        defer_loading: true,
        input_examples: [{}],
        allowed_callers: ["direct"],
        cache_control: { type: "ephemeral" },
      },
    ],
  });
  // A deferred tool is offered up front: it stays callable on every back end.
  assert.deepEqual(req.options.tools.map((t) => t.name), ["f", "later"]);
  assert.deepEqual(req.messages.map((m) => m.role), ["user"]);
  assert.deepEqual(uses.protocolOnly, []);
  assert.deepEqual([...dropped].sort(), [
    "allowed_callers",
    "defer_loading",
    "eager_input_streaming",
    "input_examples",
    "tool_addition",
    "tool_removal",
  ]);
});

Deno.test("parseMessagesRequest: the request Claude Code 2.1.332 sent (captured) reads whole", () => {
  const fixture = JSON.parse(
    Deno.readTextFileSync(new URL("../../support/claude_code_request.json", import.meta.url)),
  );
  const { req, uses, dropped } = parseMessagesRequest(fixture.body);
  assert.deepEqual(req.messages.map((m) => m.role), [
    "system",
    "user",
    "system",
    "assistant",
    "user",
  ]);
  assert.deepEqual(req.options.reasoning, { effort: "high" });
  assert.equal(req.options.tools.length, fixture.body.tools.length);
  assert.match(req.options.user ?? "", /device_id/);
  assert.deepEqual(Object.keys(req.extras.fields), ["context_management"]);
  assert.deepEqual(uses.protocolOnly, []);
  assert.deepEqual([...dropped], ["defer_loading"]);
});

Deno.test("a document's title, context and citations may be null, as Anthropic allows", () => {
  const { req } = parseMessagesRequest({
    model: "m",
    max_tokens: 10,
    messages: [{
      role: "user",
      content: [{
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "notes" },
        title: null,
        context: null,
        citations: null,
      }],
    }],
  });
  assert.deepEqual(req.messages[0]!.parts, [{
    type: "document",
    source: { kind: "text", text: "notes" },
  }]);
});
