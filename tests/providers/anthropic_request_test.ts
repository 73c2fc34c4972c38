import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { anthropicTemperature, toAnthropicRequest } from "../../src/providers/anthropic_request.ts";
import type { ChatRequest, Tool } from "../../src/types/openai.ts";
import { chatRequest } from "../support/provider_call.ts";
import { dataUrl, gifBytes, pngBytes } from "../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;
const GIF_1x1 = dataUrl("image/gif", gifBytes(1, 1)).split(",")[1]!;

const WEATHER: Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

Deno.test("toAnthropicRequest translates a whole tool conversation exactly", () => {
  const req = chatRequest({
    max_tokens: 100,
    temperature: 0.4,
    temperature_given: true,
    stop: ["END"],
    tools: [WEATHER, { type: "function", function: { name: "now" } }],
    tool_choice: "auto",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
          { type: "text", text: "   " },
        ],
      },
      { role: "developer", content: [{ type: "text", text: "Use tools." }] },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          { id: "call_2", type: "function", function: { name: "now", arguments: "" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "tool", tool_call_id: "call_2", content: "" },
      { role: "user", content: "Thanks. And now?" },
      { role: "assistant", content: [{ type: "text", text: "Sunny." }], tool_calls: [] },
      { role: "user", content: "Bye" },
    ],
  });
  assert.deepEqual(toAnthropicRequest(req, "claude-x", false), {
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
          { type: "tool_result", tool_use_id: "call_2" },
          { type: "text", text: "Thanks. And now?" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Sunny." }] },
      { role: "user", content: [{ type: "text", text: "Bye" }] },
    ],
    stop_sequences: ["END"],
    temperature: 0.2,
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
  });
});

Deno.test("toAnthropicRequest: max_tokens always, temperature only when given, stream flag", () => {
  const plain = toAnthropicRequest(chatRequest(), "m", true);
  assert.equal(plain.max_tokens, 256);
  assert.equal("temperature" in plain, false);
  assert.equal(plain.stream, true);
  assert.equal("tools" in plain || "tool_choice" in plain || "system" in plain, false);
  assert.equal("stop_sequences" in plain, false);
});

Deno.test("anthropicTemperature halves OpenAI's 0–2 into 0–1", () => {
  assert.deepEqual([0, 0.5, 1, 1.5, 2].map(anthropicTemperature), [0, 0.25, 0.5, 0.75, 1]);
});

Deno.test("toAnthropicRequest maps tool_choice auto/required/named/none and parallel_tool_calls", () => {
  const choice = (patch: Partial<ChatRequest>) =>
    toAnthropicRequest(chatRequest({ tools: [WEATHER], ...patch }), "m", false).tool_choice;
  assert.equal(choice({}), undefined);
  assert.deepEqual(choice({ tool_choice: "auto" }), { type: "auto" });
  assert.deepEqual(choice({ tool_choice: "required" }), { type: "any" });
  assert.deepEqual(choice({ tool_choice: "none" }), { type: "none" });
  assert.deepEqual(
    choice({ tool_choice: { type: "function", function: { name: "get_weather" } } }),
    { type: "tool", name: "get_weather" },
  );
  assert.deepEqual(choice({ extra: { parallel_tool_calls: false } }), {
    type: "auto",
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(choice({ tool_choice: "required", extra: { parallel_tool_calls: false } }), {
    type: "any",
    disable_parallel_tool_use: true,
  });
  // tool_choice without tools is not sent (Anthropic rejects it).
  const none = toAnthropicRequest(chatRequest({ tool_choice: "auto" }), "m", false);
  assert.equal("tool_choice" in none, false);
});

Deno.test("toAnthropicRequest takes the image media type from the data URL", () => {
  const req = chatRequest({
    messages: [{
      role: "user",
      content: [{ type: "image_url", image_url: { url: `data:image/gif;base64,${GIF_1x1}` } }],
    }],
  });
  const block = (toAnthropicRequest(req, "m", false).messages[0]!.content as unknown[])[0];
  assert.deepEqual(block, {
    type: "image",
    source: { type: "base64", media_type: "image/gif", data: GIF_1x1 },
  });
});

Deno.test("toAnthropicRequest passes top_p and user (as metadata.user_id)", () => {
  const body = toAnthropicRequest(
    chatRequest({ extra: { top_p: 0.9, user: "u-42", frequency_penalty: 1 } }),
    "m",
    false,
  );
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.metadata, { user_id: "u-42" });
  assert.equal("frequency_penalty" in body, false);
});

Deno.test("toAnthropicRequest rejects tool-call arguments that are not a JSON object, naming them", () => {
  for (const args of ["{not json", "[1,2]", "42"]) {
    const req = chatRequest({
      messages: [
        { role: "user", content: "x" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }],
        },
        { role: "tool", tool_call_id: "c", content: "ok" },
      ],
    });
    assert.throws(
      () => toAnthropicRequest(req, "m", false),
      (e) =>
        e instanceof ApiError && e.status === 400 &&
        e.param === "messages[1].tool_calls[0].function.arguments",
    );
  }
});

Deno.test("toAnthropicRequest: a conversation of only blank or system messages is a 400", () => {
  const req = chatRequest({
    messages: [{ role: "system", content: "x" }, { role: "user", content: "  " }],
  });
  assert.throws(
    () => toAnthropicRequest(req, "m", false),
    (e) => e instanceof ApiError && e.status === 400 && e.param === "messages",
  );
});
