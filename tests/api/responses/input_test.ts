import assert from "node:assert/strict";
import type { Message } from "../../../src/canonical/conversation.ts";
import { parseHistory, parseInput } from "../../../src/api/responses/input.ts";
import { parseResponsesRequest } from "../../../src/api/responses/request.ts";
import { responsesUses } from "../../../src/api/responses/uses.ts";
import { encodeReasoning } from "../../../src/api/responses/reasoning_envelope.ts";
import { ToolMap } from "../../../src/api/responses/tool_map.ts";
import type { PendingImages } from "../../../src/api/shared/images.ts";
import { ApiError } from "../../../src/errors.ts";
import { readJson, readRequest } from "../../../src/validation/reader.ts";

const PDF_BASE64 = new TextEncoder().encode("%PDF-1.4\n%%EOF\n").toBase64();

function parse(input: unknown, history: Message[] = []) {
  const pending: PendingImages = { fields: [], parts: [] };
  return {
    ...parseInput(readRequest({ input }).get("input"), history, pending, new ToolMap()),
    pending,
  };
}

Deno.test("a string is one user message", () => {
  const { messages, items } = parse("hello");
  assert.deepEqual(messages, [{ role: "user", parts: [{ type: "text", text: "hello" }] }]);
  assert.deepEqual(items, [{ type: "message", role: "user", content: "hello" }]);
});

Deno.test("an assistant's items make one message; outputs are tool messages", () => {
  const signed = { type: "reasoning" as const, text: "hmm", signature: "sig", style: "anthropic" };
  const { messages, uses } = parse([
    { role: "developer", content: [{ type: "input_text", text: "rules" }] },
    {
      role: "user",
      content: [
        { type: "input_text", text: "look" },
        { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
      ],
    },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: encodeReasoning(signed) },
    {
      type: "message",
      role: "assistant",
      id: "msg_1",
      status: "completed",
      content: [{ type: "output_text", text: "I will call", annotations: [] }],
    },
    { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: "c1", output: "42" },
    { role: "assistant", content: [{ type: "refusal", refusal: "no" }] },
  ]);
  assert.deepEqual(messages, [
    { role: "developer", parts: [{ type: "text", text: "rules" }] },
    {
      role: "user",
      parts: [
        { type: "text", text: "look" },
        {
          type: "image",
          source: { kind: "url", url: "https://example.com/a.png" },
          detail: "low",
        },
      ],
    },
    {
      role: "assistant",
      parts: [
        signed,
        { type: "text", text: "I will call" },
        { type: "tool_call", id: "c1", name: "f", arguments: "{}" },
      ],
    },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c1",
        content: [{ type: "text", text: "42" }],
        isError: false,
      }],
    },
    { role: "assistant", parts: [{ type: "refusal", text: "no" }] },
  ]);
  assert.deepEqual(uses, { image: "input[1].content[1]", toolItem: "input[4]" });
});

Deno.test("an output may answer a call of the previous response", () => {
  const history: Message[] = [{
    role: "assistant",
    parts: [{ type: "tool_call", id: "c9", name: "f", arguments: "{}" }],
  }];
  const { messages, unanswered } = parse(
    [{ type: "function_call_output", call_id: "c9", output: "ok" }],
    history,
  );
  assert.equal(messages[0]!.role, "tool");
  assert.equal(unanswered, null);
});

Deno.test("data URLs wait for the request's image checks", () => {
  const { pending } = parse([{
    role: "user",
    content: [{ type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }],
  }]);
  assert.deepEqual(pending.fields.map((f) => f.param), ["input[0].content[0].image_url"]);
});

Deno.test("bad items are named by their path", () => {
  const cases: [unknown, string][] = [
    [[{ type: "computer_call" }], "input[0].type"],
    [[{ role: "user", content: [{ type: "output_text", text: "x" }] }], "input[0].content[0].type"],
    [
      [{ role: "system", content: [{ type: "input_image", image_url: "https://a.b/c" }] }],
      "input[0].content[0].type",
    ],
    [
      [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }],
      "input[0].content[0].file_id",
    ],
    [[{ role: "user", content: [] }], "input[0].content"],
    [
      [{ role: "user", content: [{ type: "input_image", image_url: "https://[x" }] }],
      "input[0].content[0].image_url",
    ],
    [[{ type: "function_call", call_id: "a", name: "f", arguments: {} }], "input[0].arguments"],
    [[
      { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
    ], "input[1].call_id"],
    [[
      { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: "1" },
      { type: "function_call_output", call_id: "a", output: "2" },
    ], "input[2].call_id"],
    [[{ type: "reasoning", summary: [{ type: "text", text: "x" }] }], "input[0].summary[0].type"],
  ];
  for (const [input, param] of cases) {
    assert.throws(() => parse(input), (e) => e instanceof ApiError && e.param === param, param);
  }
});

Deno.test("input_file parts are documents, in user messages and in function call outputs", () => {
  const { messages } = parse([
    {
      role: "user",
      content: [
        {
          type: "input_file",
          file_data: `data:application/pdf;base64,${PDF_BASE64}`,
          filename: "a.pdf",
        },
        { type: "input_file", file_url: "https://example.com/b.pdf" },
        { type: "input_file", file_data: `data:text/plain;base64,${btoa("notes")}` },
      ],
    },
    { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
    {
      type: "function_call_output",
      call_id: "c1",
      output: [{ type: "input_file", file_url: "https://example.com/c.pdf", filename: "c" }],
    },
  ]);
  const pdf = { kind: "data", mediaType: "application/pdf", base64: PDF_BASE64, pages: 1 };
  assert.deepEqual(messages[0]!.parts, [
    { type: "document", source: pdf, title: "a.pdf" },
    { type: "document", source: { kind: "url", url: "https://example.com/b.pdf" } },
    { type: "document", source: { kind: "text", text: "notes" } },
  ]);
  assert.deepEqual(messages[2]!.parts, [{
    type: "tool_result",
    callId: "c1",
    isError: false,
    content: [{
      type: "document",
      source: { kind: "url", url: "https://example.com/c.pdf" },
      title: "c",
    }],
  }]);
});

Deno.test("bad input_file parts are named by their field", () => {
  const file = (part: Record<string, unknown>, role = "user") => [
    { role, content: [{ type: "input_file", ...part }] },
  ];
  const at = "input[0].content[0]";
  const cases: [unknown, string, RegExp][] = [
    [file({ file_id: "file-1" }), `${at}.file_id`, /file ids are not supported/],
    [file({ filename: "a.pdf" }), at, /file_data or file_url, but got neither/],
    [file({ file_data: "data:application/pdf;base64,%%%%" }), `${at}.file_data`, /base64/],
    [
      file({ file_data: `data:application/pdf;base64,${btoa("no pdf")}` }),
      `${at}.file_data`,
      /%PDF-/,
    ],
    [
      file({ file_data: `data:image/png;base64,${PDF_BASE64}` }),
      `${at}.file_data`,
      /"image\/png"/,
    ],
    [file({ file_url: "http://example.com/a.pdf" }), `${at}.file_url`, /plain http:\/\//],
    [file({ file_url: "a.pdf" }), `${at}.file_url`, /https:\/\/ URL/],
    [
      file({ file_url: "https://example.com/a.pdf" }, "developer"),
      `${at}.type`,
      /input_file parts are only allowed in user messages, not in developer messages/,
    ],
  ];
  for (const [input, param, words] of cases) {
    assert.throws(
      () => parse(input),
      (e) => e instanceof ApiError && e.param === param && words.test(e.message),
      param,
    );
  }
});

Deno.test("responsesUses records input_file parts but those of text as documents", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: [{
      role: "user",
      content: [
        { type: "input_text", text: "read" },
        { type: "input_file", file_id: "file-1" },
        { type: "input_file", file_data: `data:text/plain;base64,${btoa("x")}` },
        { type: "input_image", image_url: "https://example.com/a.png" },
        { type: "input_file", file_url: "https://example.com/a.pdf" },
      ],
    }],
  });
  const uses = responsesUses(req);
  assert.deepEqual(uses.documents, ["input[0].content[1]", "input[0].content[4]"]);
  assert.deepEqual(uses.images, ["input[0].content[3]"]);
});

Deno.test("responsesUses records the images and PDFs of a tool output", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: [
      { type: "function_call", call_id: "c1", name: "read", arguments: "{}" },
      {
        type: "function_call_output",
        call_id: "c1",
        output: [
          { type: "input_text", text: "the file:" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0xLjQK" },
          { type: "input_image", image_url: "https://example.com/a.png" },
        ],
      },
      { type: "function_call_output", call_id: "c2", output: "plain text" },
    ],
  });
  const uses = responsesUses(req);
  assert.deepEqual(uses.documents, ["input[1].output[1]"]);
  assert.deepEqual(uses.images, ["input[1].output[2]"]);
  assert.deepEqual(uses.toolUses, ["input[0]", "input[1]", "input[2]"]);
});

Deno.test("every function call needs an output: in the input, and those of the previous response", () => {
  const unanswered = (input: unknown, history: Message[] = []) => {
    const error = parse(input, history).unanswered;
    return error && [error.param, error.message];
  };
  const [param, message] = unanswered([
    { role: "user", content: "go" },
    { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
    { type: "function_call", call_id: "c2", name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: "c1", output: "1" },
  ])!;
  assert.equal(param, "input[2].call_id");
  assert.match(message!, /no tool output found for function call "c2"/);
  const history: Message[] = [
    { role: "user", parts: [{ type: "text", text: "go" }] },
    { role: "assistant", parts: [{ type: "tool_call", id: "c9", name: "f", arguments: "{}" }] },
  ];
  for (const input of ["and now?", [], [{ role: "user", content: "and now?" }]]) {
    const [param, message] = unanswered(input, history)!;
    assert.equal(param, "input", JSON.stringify(input));
    assert.match(message!, /no tool output found for function call "c9" of the previous response/);
  }
});

Deno.test("a stored history may end with calls: the next input answers them", () => {
  const pending: PendingImages = { fields: [], parts: [] };
  const history = parseHistory(
    readJson([
      { role: "user", content: "go" },
      { type: "function_call", call_id: "c9", name: "f", arguments: "{}" },
    ]),
    pending,
    new ToolMap(),
  );
  assert.deepEqual(history.map((m) => m.role), ["user", "assistant"]);
  const { messages, unanswered } = parse(
    [{ type: "function_call_output", call_id: "c9", output: "ok" }],
    history,
  );
  assert.equal(messages[0]!.role, "tool");
  assert.equal(unanswered, null);
});

Deno.test("custom tool calls and namespaced calls come back under their canonical names", () => {
  const tools = new ToolMap();
  tools.add({ kind: "custom", name: "apply_patch" });
  tools.add({ kind: "function", name: "spawn_agent", namespace: "multi_agent_v1" });
  const pending: PendingImages = { fields: [], parts: [] };
  const { messages, unanswered } = parseInput(
    readRequest({
      input: [
        { role: "user", content: "go" },
        { type: "custom_tool_call", call_id: "c1", name: "apply_patch", input: "*** Begin" },
        {
          type: "function_call",
          call_id: "c2",
          namespace: "multi_agent_v1",
          name: "spawn_agent",
          arguments: "{}",
        },
        { type: "custom_tool_call_output", call_id: "c1", output: "done" },
        {
          type: "function_call_output",
          call_id: "c2",
          output: [{ type: "input_text", text: "ok" }],
        },
      ],
    }).get("input"),
    [],
    pending,
    tools,
  );
  assert.equal(unanswered, null);
  assert.deepEqual(messages.slice(1), [
    {
      role: "assistant",
      parts: [
        { type: "tool_call", id: "c1", name: "apply_patch", arguments: '{"input":"*** Begin"}' },
        { type: "tool_call", id: "c2", name: "multi_agent_v1__spawn_agent", arguments: "{}" },
      ],
    },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c1",
        content: [{ type: "text", text: "done" }],
        isError: false,
      }],
    },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "c2",
        content: [{ type: "text", text: "ok" }],
        isError: false,
      }],
    },
  ]);
});

Deno.test("a custom tool call must be answered too", () => {
  const { unanswered } = parse([
    { role: "user", content: "go" },
    { type: "custom_tool_call", call_id: "c1", name: "apply_patch", input: "x" },
  ]);
  assert.equal(unanswered?.param, "input[1].call_id");
});

Deno.test("input_file: a null field is an absent one, as OpenAI's schema allows", () => {
  const { messages } = parse([{
    role: "user",
    content: [{
      type: "input_file",
      file_id: null,
      filename: null,
      file_url: null,
      file_data: "data:application/pdf;base64,JVBERi0xLjQK",
    }],
  }]);
  assert.deepEqual(messages[0]!.parts, [{
    type: "document",
    source: { kind: "data", mediaType: "application/pdf", base64: "JVBERi0xLjQK", pages: 1 },
  }]);
});
