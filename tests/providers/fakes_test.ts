/** The fakes reject what the real upstreams reject, so a translation mistake fails a test. */
import assert from "node:assert/strict";
import { checkAnthropicRequest } from "../support/fake_anthropic.ts";
import { checkOpenAIRequest } from "../support/fake_openai.ts";
import { checkImageRequest } from "../support/fake_openai_images.ts";
import { checkModerationRequest } from "../support/fake_openai_moderation.ts";
import { dataUrl, pngBytes } from "../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;
const KEY = "k";
const anthropicHeaders = new Headers({
  "x-api-key": KEY,
  "anthropic-version": "2023-06-01",
  "content-type": "application/json",
});
const openaiHeaders = new Headers({
  authorization: `Bearer ${KEY}`,
  "content-type": "application/json",
});

function anthropic(body: Record<string, unknown>, headers = anthropicHeaders): string[] {
  return checkAnthropicRequest(
    headers,
    {
      model: "c",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      ...body,
    },
    KEY,
    "2023-06-01",
  );
}

function openai(body: Record<string, unknown>, headers = openaiHeaders): string[] {
  return checkOpenAIRequest(headers, {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    ...body,
  }, KEY);
}

const toolUse = { type: "tool_use", id: "t1", name: "f", input: {} };
const toolResult = { type: "tool_result", tool_use_id: "t1", content: "ok" };

Deno.test("the Anthropic fake accepts a valid request", () => {
  assert.deepEqual(anthropic({}), []);
  assert.deepEqual(
    anthropic({
      system: [{ type: "text", text: "s" }],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "hi" }, {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: PNG_1x1 },
          }],
        },
        { role: "assistant", content: [{ type: "text", text: "x" }, toolUse] },
        { role: "user", content: [toolResult, { type: "text", text: "next" }] },
      ],
    }),
    [],
  );
});

Deno.test("the Anthropic fake rejects each translation mistake", () => {
  const cases: [string, Record<string, unknown>, Headers?][] = [
    [
      "wrong key",
      {},
      new Headers({ "anthropic-version": "2023-06-01", "content-type": "application/json" }),
    ],
    ["bearer auth", {}, new Headers([...anthropicHeaders, ["authorization", "Bearer k"]])],
    ["no max_tokens", { max_tokens: undefined }],
    ["system role", {
      messages: [{ role: "system", content: "s" }, { role: "user", content: "u" }],
    }],
    ["unmerged turns", {
      messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }],
    }],
    ["blank text", { messages: [{ role: "user", content: [{ type: "text", text: " " }] }] }],
    ["empty content", { messages: [{ role: "user", content: [] }] }],
    ["temperature > 1", { temperature: 1.4 }],
    ["openai tool shape", { tools: [{ type: "function", function: { name: "f" } }] }],
    ["tool_choice string", {
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: "auto",
    }],
    ["image mime mismatch", {
      messages: [{
        role: "user",
        content: [{
          type: "image",
          source: { type: "base64", media_type: "image/jpeg", data: PNG_1x1 },
        }],
      }],
    }],
    ["image as url", {
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:" } }] }],
    }],
    ["tool_use without result", {
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: [toolUse] },
        { role: "user", content: "b" },
      ],
    }],
    ["result after text", {
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: [toolUse] },
        { role: "user", content: [{ type: "text", text: "b" }, toolResult] },
      ],
    }],
    ["unknown field", { stream_options: { include_usage: true } }],
  ];
  for (const [name, body, headers] of cases) {
    assert.notDeepEqual(anthropic(body, headers), [], name);
  }
});

Deno.test("the OpenAI fake rejects each translation mistake", () => {
  const cases: [string, Record<string, unknown>, Headers?][] = [
    ["wrong key", {}, new Headers({ "content-type": "application/json" })],
    ["gateway field", { include_usage: true }],
    ["internal field", { max_tokens_given: true }],
    ["stream without usage", { stream: true }],
    ["stream_options without stream", { stream_options: { include_usage: true } }],
    ["both max fields", { max_tokens: 5, max_completion_tokens: 5 }],
    ["tool_choice without tools", { tool_choice: "auto" }],
    ["unanswered tool call", {
      messages: [
        { role: "user", content: "a" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "user", content: "b" },
      ],
    }],
    ["stray tool message", {
      messages: [{ role: "user", content: "a" }, { role: "tool", tool_call_id: "x", content: "r" }],
    }],
    ["bad image", {
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }],
      }],
    }],
  ];
  for (const [name, body, headers] of cases) {
    assert.notDeepEqual(openai(body, headers), [], name);
  }
  assert.deepEqual(openai({ stream: true, stream_options: { include_usage: true } }), []);
});

Deno.test("the OpenAI fake's moderation endpoint rejects what OpenAI rejects", () => {
  const image = { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } };
  const text = { type: "text", text: "caption" };
  const check = (body: unknown, headers = openaiHeaders) =>
    checkModerationRequest(headers, body, KEY);
  for (
    const body of [
      { model: "omni-moderation-latest", input: "a" },
      { model: "omni-moderation-latest", input: ["a", "b"] },
      { model: "omni-moderation-latest", input: [text, image] },
      { input: [image] },
      { model: "text-moderation-stable", input: ["a"] },
    ]
  ) assert.deepEqual(check(body), [], JSON.stringify(body));
  const cases: [string, unknown, Headers?][] = [
    ["wrong key", { input: "a" }, new Headers({ "content-type": "application/json" })],
    ["a gateway field", { input: "a", input_images: [] }],
    ["no input", { model: "omni-moderation-latest" }],
    ["an empty array", { input: [] }],
    ["strings and parts mixed", { input: ["a", text] }],
    ["two images", { input: [text, image, image] }],
    ["an image for a text model", { model: "text-moderation-latest", input: [text, image] }],
    ["not an image", {
      input: [{ type: "image_url", image_url: { url: "data:image/png;base64,aGk=" } }],
    }],
    ["a bad part", { input: [{ type: "video", url: "x" }] }],
    ["a part with extra fields", { input: [{ ...text, detail: "low" }] }],
  ];
  for (const [name, body, headers] of cases) assert.notDeepEqual(check(body, headers), [], name);
});

Deno.test("the OpenAI fake's image endpoint rejects what each model rejects", () => {
  const check = (body: Record<string, unknown>) =>
    checkImageRequest(openaiHeaders, { prompt: "a cat", ...body }, KEY);
  for (
    const body of [
      { model: "dall-e-3", size: "1792x1024", response_format: "b64_json" },
      { model: "dall-e-2", n: 10, size: "256x256" },
      { model: "gpt-image-1", n: 3, size: "1536x1024", quality: "high" },
      { model: "flux-schnell", size: "64x48", guidance_scale: 3.5, num_inference_steps: 4 },
    ]
  ) assert.deepEqual(check(body), [], JSON.stringify(body));
  const cases: [string, Record<string, unknown>][] = [
    ["response_format for a GPT image model", {
      model: "gpt-image-1",
      response_format: "b64_json",
    }],
    ["n = 2 for dall-e-3", { model: "dall-e-3", n: 2 }],
    ["a size dall-e-3 does not make", { model: "dall-e-3", size: "512x512" }],
    ["guidance_scale for dall-e-3", { model: "dall-e-3", guidance_scale: 3.5 }],
    ["num_inference_steps for gpt-image-1", { model: "gpt-image-1", num_inference_steps: 30 }],
    ["a gateway field", { model: "dall-e-2", width: 256 }],
    ["a bad response_format", { model: "dall-e-2", response_format: "png" }],
    ["n not an integer", { model: "flux-schnell", n: 1.5 }],
    ["a malformed size", { model: "flux-schnell", size: "big" }],
    ["no prompt", { model: "dall-e-2", prompt: "" }],
    ["steps not an integer", { model: "flux-schnell", num_inference_steps: 2.5 }],
  ];
  for (const [name, body] of cases) assert.notDeepEqual(check(body), [], name);
});
