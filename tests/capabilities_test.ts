/**
 * The one capability check of chat calls: the same canonical request, sent through each front
 * door (chat completions, Messages, Responses, Gemini), is refused with the same status and
 * message, the `param` naming the use in that door's own wire format (Anthropic's and Google's
 * error shapes put it at the head of the message).
 */
import assert from "node:assert/strict";
import { admin, startAdminServer } from "./support/admin.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";

const IMAGE = "https://example.com/a.png";
const TOOL = {
  name: "lookup",
  description: "Looks a word up.",
  schema: { type: "object", properties: { word: { type: "string" } } },
};

/** One request, as each door writes it. */
interface Case {
  name: string;
  chat: Record<string, unknown>;
  messages: Record<string, unknown>;
  responses: Record<string, unknown>;
  /** Gemini's: the model in the path, the body. */
  gemini: { model: string; body: Record<string, unknown> };
  /** The message every door answers. */
  message: string;
  /** The param, by door (Anthropic's error shape names it at the head of the message). */
  params: { chat: string; responses: string; messages: string; gemini: string };
}

const CASES: Case[] = [
  {
    name: "a model that does not chat",
    chat: { model: "sim-moderation", messages: [{ role: "user", content: "hi" }] },
    messages: {
      model: "sim-moderation",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
    },
    responses: { model: "sim-moderation", input: "hi" },
    gemini: { model: "sim-moderation", body: { contents: [{ parts: [{ text: "hi" }] }] } },
    message: "The model `sim-moderation` does not support chat completions.",
    params: { chat: "model", responses: "model", messages: "model", gemini: "model" },
  },
  {
    name: "an image for a model without image_input",
    chat: {
      model: "sim-chat",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: IMAGE } }],
      }],
    },
    messages: {
      model: "sim-chat",
      max_tokens: 16,
      messages: [{
        role: "user",
        content: [{ type: "text", text: "see" }, {
          type: "image",
          source: { type: "url", url: IMAGE },
        }],
      }],
    },
    responses: {
      model: "sim-chat",
      input: [{
        role: "user",
        content: [{ type: "input_text", text: "see" }, { type: "input_image", image_url: IMAGE }],
      }],
    },
    gemini: {
      model: "sim-chat",
      body: {
        contents: [{
          role: "user",
          parts: [{ text: "see" }, { fileData: { mimeType: "image/png", fileUri: IMAGE } }],
        }],
      },
    },
    message:
      "The model `sim-chat` does not accept image input; send text only or use a model with image_input.",
    params: {
      chat: "messages[0].content[1]",
      responses: "input[0].content[1]",
      messages: "messages.0.content.1",
      gemini: "contents[0].parts[1]",
    },
  },
  {
    name: "tools for a model without function_calling",
    chat: {
      model: "sim-chat",
      messages: [{ role: "user", content: "hi" }],
      tools: [{
        type: "function",
        function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema },
      }],
    },
    messages: {
      model: "sim-chat",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
    },
    responses: {
      model: "sim-chat",
      input: "hi",
      tools: [{
        type: "function",
        name: TOOL.name,
        description: TOOL.description,
        parameters: TOOL.schema,
      }],
    },
    gemini: {
      model: "sim-chat",
      body: {
        contents: [{ parts: [{ text: "hi" }] }],
        tools: [{
          functionDeclarations: [{
            name: TOOL.name,
            description: TOOL.description,
            parametersJsonSchema: TOOL.schema,
          }],
        }],
      },
    },
    message: "The model `sim-chat` does not support function calling (tools).",
    params: { chat: "tools", responses: "tools", messages: "tools", gemini: "tools" },
  },
  {
    name: "a tool call in the conversation for a model without function_calling",
    chat: {
      model: "sim-chat",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: TOOL.name, arguments: '{"word":"a"}' },
          }],
        },
        { role: "tool", tool_call_id: "call_1", content: "found" },
      ],
    },
    messages: {
      model: "sim-chat",
      max_tokens: 16,
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "call_1", name: TOOL.name, input: { word: "a" } }],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "call_1", content: "found" }],
        },
      ],
    },
    responses: {
      model: "sim-chat",
      input: [
        { role: "user", content: "hi" },
        {
          type: "function_call",
          call_id: "call_1",
          name: TOOL.name,
          arguments: '{"word":"a"}',
        },
        { type: "function_call_output", call_id: "call_1", output: "found" },
      ],
    },
    gemini: {
      model: "sim-chat",
      body: {
        contents: [
          { role: "user", parts: [{ text: "hi" }] },
          {
            role: "model",
            parts: [{ functionCall: { id: "call_1", name: TOOL.name, args: { word: "a" } } }],
          },
          {
            role: "user",
            parts: [{
              functionResponse: { id: "call_1", name: TOOL.name, response: { output: "found" } },
            }],
          },
        ],
      },
    },
    message: "The model `sim-chat` does not support function calling (tools).",
    params: {
      chat: "messages[1].tool_calls",
      responses: "input[1]",
      messages: "messages.1.content.0",
      gemini: "contents[1].parts[0]",
    },
  },
];

async function post(server: TestServer, path: string, body: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

for (const c of CASES) {
  Deno.test(`capabilities: ${c.name} is refused alike by every front door`, async () => {
    await using server = await startServer();
    const chat = await post(server, "/v1/chat/completions", c.chat);
    const responses = await post(server, "/v1/responses", c.responses);
    const messages = await post(server, "/v1/messages", c.messages);
    const gemini = await post(
      server,
      `/v1beta/models/${c.gemini.model}:generateContent`,
      c.gemini.body,
    );
    for (const answer of [chat, responses, messages, gemini]) assert.equal(answer.status, 400);
    assert.deepEqual(chat.body.error, {
      message: c.message,
      type: "invalid_request_error",
      param: c.params.chat,
      code: "unsupported_capability",
    });
    assert.deepEqual(responses.body.error, { ...chat.body.error, param: c.params.responses });
    assert.deepEqual(messages.body, {
      type: "error",
      error: { type: "invalid_request_error", message: `${c.params.messages}: ${c.message}` },
      request_id: messages.body.request_id,
    });
    assert.deepEqual(gemini.body, {
      error: { code: 400, message: `${c.params.gemini}: ${c.message}`, status: "INVALID_ARGUMENT" },
    });
  });
}

Deno.test("capabilities: hosted tools follow the model's hosted_tools policy on every door: left out and named by default, refused with refuse", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[]).push({
        id: "sim-strict",
        provider: "sim",
        chat_completions: true,
        hosted_tools: "refuse",
      });
    }),
  });
  const messagesBody = {
    max_tokens: 16,
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "web_search_20250305", name: "web_search" }],
    // A choice only the server tool meets leaves the choice to the model where it is left out.
    tool_choice: { type: "tool", name: "web_search" },
  };
  const geminiBody = {
    contents: [{ parts: [{ text: "hi" }] }],
    tools: [{ googleSearch: {} }, { codeExecution: {} }],
  };
  const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
  for (const stream of [false, true]) {
    const messages = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers,
      body: JSON.stringify({ ...messagesBody, model: "sim-chat", stream }),
    });
    assert.equal(messages.status, 200);
    assert.equal(messages.headers.get("x-switchyard-dropped-params"), "tools.web_search_20250305");
    await messages.body?.cancel();
  }
  const method = ["generateContent", "streamGenerateContent?alt=sse"];
  for (const m of method) {
    const gemini = await fetch(`${server.url}/v1beta/models/sim-chat:${m}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(geminiBody),
    });
    assert.equal(gemini.status, 200);
    assert.equal(
      gemini.headers.get("x-switchyard-dropped-params"),
      "tools.codeExecution,tools.googleSearch",
    );
    await gemini.body?.cancel();
  }
  assert.match(
    server.output.err + server.output.out,
    /hosted tools left out for model sim-chat, whose back end cannot run them: googleSearch, codeExecution/,
  );

  const messages = await post(server, "/v1/messages", { ...messagesBody, model: "sim-strict" });
  assert.equal(messages.status, 400);
  assert.equal(
    messages.body.error.message,
    "tools.0.type: The model `sim-strict` is not served by a provider that speaks Anthropic's Messages API, so it cannot take `web_search_20250305`; only such models can.",
  );
  const gemini = await post(server, "/v1beta/models/sim-strict:generateContent", geminiBody);
  assert.equal(gemini.status, 400);
  assert.equal(
    gemini.body.error.message,
    "tools[0].googleSearch: The model `sim-strict` is not served by a provider that speaks Google's Gemini API, so it cannot take `googleSearch`; only such models can.",
  );
});

Deno.test("capabilities: what only a door's own protocol carries (not a tool) needs a back end that speaks it, whatever the policy", async () => {
  await using server = await startServer();
  const messages = await post(server, "/v1/messages", {
    model: "sim-chat",
    max_tokens: 16,
    messages: [{
      role: "user",
      content: [{
        type: "search_result",
        source: "https://example.test/a",
        title: "A",
        content: [{ type: "text", text: "x" }],
      }],
    }],
  });
  assert.equal(messages.status, 400);
  assert.match(
    messages.body.error.message,
    /^messages\.0\.content\.0\.type: The model `sim-chat` is not served by a provider that speaks Anthropic's Messages API, so it cannot take `search_result`/,
  );
});

Deno.test("capabilities: the Responses API's hosted tools are left out where the back end cannot run them, or refused when the model says so", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[]).push({
        id: "sim-strict",
        provider: "sim",
        chat_completions: true,
        hosted_tools: "refuse",
      });
    }),
  });
  const body = { model: "sim-chat", input: "hi", tools: [{ type: "web_search" }] };
  const dropped = await fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(dropped.status, 200);
  assert.equal(dropped.headers.get("x-switchyard-dropped-params"), "tools.web_search");
  const answer = await dropped.json();
  assert.equal(answer.status, "completed");
  assert.deepEqual(answer.tools, [{ type: "web_search" }]);

  const responses = await post(server, "/v1/responses", { ...body, model: "sim-strict" });
  assert.equal(responses.status, 400);
  assert.deepEqual(responses.body.error, {
    message:
      "The model `sim-strict` is not served by a provider that speaks the Responses API, so it cannot take `web_search`; only such models can.",
    type: "invalid_request_error",
    param: "tools[0].type",
    code: "unsupported_capability",
  });
});

Deno.test("capabilities: the admin API sets a model's hosted_tools policy, which takes effect at once", async () => {
  await using server = await startAdminServer();
  const body = { model: "sim-chat", input: "hi", tools: [{ type: "code_interpreter" }] };
  assert.equal((await post(server, "/v1/responses", body)).status, 200);
  const patched = await admin(server, "PATCH", "/admin/models/sim-chat", {
    hosted_tools: "refuse",
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.hosted_tools, "refuse");
  const refused = await post(server, "/v1/responses", body);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.param, "tools[0].type");
  const bad = await admin(server, "PATCH", "/admin/models/sim-chat", { hosted_tools: "maybe" });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, "hosted_tools");
});
