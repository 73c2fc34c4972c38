import assert from "node:assert/strict";
import { AnthropicProvider } from "../../src/providers/anthropic/provider.ts";
import { GeminiProvider } from "../../src/providers/gemini/provider.ts";
import {
  looksLikeChat,
  readAnthropicModels,
  readGeminiModels,
  readOpenAIModels,
} from "../../src/providers/model_lists.ts";
import { OpenAIProvider } from "../../src/providers/openai/provider.ts";
import type { ListedModel } from "../../src/providers/types.ts";
import { startFakeAnthropic } from "../support/fake_anthropic.ts";
import { startFakeGemini } from "../support/fake_gemini.ts";
import { anthropicModel, geminiModel } from "../support/fake_model_lists.ts";
import { startFakeOpenAI } from "../support/fake_openai.ts";
import { providerDeps } from "../support/provider_call.ts";

const ids = (models: ListedModel[]) => models.map((m) => m.id);

Deno.test("OpenAI: GET /v1/models with the Bearer key lists the chat models, not embeddings, speech, images or moderation", async () => {
  await using fake = startFakeOpenAI();
  const provider = new OpenAIProvider(providerDeps("openai", `${fake.url}/v1`, fake.apiKey));
  const models = await provider.listModels(new AbortController().signal);
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.last.method, "GET");
  assert.equal(fake.last.path, "/v1/models");
  assert.deepEqual(ids(models), ["gpt-4o-mini", "gpt-up"]);
  assert.deepEqual(models[0], {
    id: "gpt-4o-mini",
    created: 1721172741,
    contextLength: null,
    imageInput: null,
    functionCalling: null,
  });
});

Deno.test("OpenAI-compatible hosts: context_length, context_window, max_model_len and OpenRouter's modalities and parameters are read", () => {
  const openRouter = {
    id: "meta-llama/llama-3.3-70b-instruct",
    canonical_slug: "meta-llama/llama-3.3-70b-instruct",
    name: "Meta: Llama 3.3 70B Instruct",
    created: 1733506137,
    context_length: 131072,
    architecture: {
      modality: "text->text",
      input_modalities: ["text"],
      output_modalities: ["text"],
      tokenizer: "Llama3",
      instruct_type: null,
    },
    supported_parameters: ["max_tokens", "temperature", "tools", "tool_choice"],
  };
  const vision = {
    ...openRouter,
    id: "openai/gpt-4o",
    architecture: { ...openRouter.architecture, input_modalities: ["text", "image", "file"] },
    supported_parameters: ["max_tokens"],
  };
  const imageOut = {
    ...openRouter,
    id: "black-forest-labs/flux",
    architecture: { ...openRouter.architecture, output_modalities: ["image"] },
  };
  const groq = {
    id: "llama-3.1-8b-instant",
    object: "model",
    created: 1693721698,
    owned_by: "Meta",
    active: true,
    context_window: 131072,
    public_apps: null,
  };
  const vllm = { id: "Qwen/Qwen3-8B", object: "model", created: 1, max_model_len: 32768 };
  const models = readOpenAIModels({
    object: "list",
    data: [openRouter, vision, imageOut, groq, vllm, { object: "model" }, "junk"],
  });
  assert.deepEqual(models, [
    {
      id: "meta-llama/llama-3.3-70b-instruct",
      created: 1733506137,
      contextLength: 131072,
      imageInput: false,
      functionCalling: true,
    },
    {
      id: "openai/gpt-4o",
      created: 1733506137,
      contextLength: 131072,
      imageInput: true,
      functionCalling: false,
    },
    {
      id: "llama-3.1-8b-instant",
      created: 1693721698,
      contextLength: 131072,
      imageInput: null,
      functionCalling: null,
    },
    {
      id: "Qwen/Qwen3-8B",
      created: 1,
      contextLength: 32768,
      imageInput: null,
      functionCalling: null,
    },
  ]);
});

Deno.test("a list without its array is a malformed answer", () => {
  assert.throws(() => readOpenAIModels({ object: "list" }), /malformed model list/);
  assert.throws(() => readAnthropicModels([]), /malformed model list/);
  assert.throws(() => readGeminiModels({ data: [] }), /malformed model list/);
});

Deno.test("the non-chat rule: ids naming embeddings, speech, transcription, images, moderation, realtime, rerank or legacy completions", () => {
  for (
    const id of [
      "text-embedding-3-large",
      "nomic-embed-text",
      "tts-1",
      "gpt-4o-mini-tts",
      "whisper-large-v3",
      "gpt-4o-transcribe",
      "dall-e-2",
      "gpt-image-1",
      "text-moderation-latest",
      "gpt-4o-realtime-preview",
      "rerank-english-v3.0",
      "babbage-002",
      "davinci-002",
    ]
  ) assert.equal(looksLikeChat(id), false, id);
  for (const id of ["gpt-4o", "o3-mini", "claude-3-haiku", "gemini-2.5-pro", "llama3:8b"]) {
    assert.equal(looksLikeChat(id), true, id);
  }
});

Deno.test("Anthropic: GET /v1/models with x-api-key and anthropic-version, every page read through after_id", async () => {
  await using fake = startFakeAnthropic();
  fake.listPageMax = 2;
  const provider = new AnthropicProvider(providerDeps("anthropic", fake.url, fake.apiKey));
  const models = await provider.listModels(new AbortController().signal);
  assert.deepEqual(fake.violations, []);
  assert.deepEqual(
    fake.received.map((r) => [r.method, r.path]),
    [["GET", "/v1/models"], ["GET", "/v1/models"]],
  );
  assert.deepEqual(ids(models), [
    "claude-up",
    "claude-sonnet-4-5-20250929",
    "claude-3-haiku-20240307",
  ]);
  assert.deepEqual(models[0], {
    id: "claude-up",
    created: Date.UTC(2026, 0, 1) / 1000,
    contextLength: 200000,
    imageInput: true,
    functionCalling: null,
  });
  assert.equal(models[2]!.imageInput, false);
});

Deno.test("Anthropic: the older ModelInfo (no limits, no capabilities) and an epoch created_at", () => {
  const page = {
    data: [
      {
        type: "model",
        id: "claude-2.1",
        display_name: "Claude 2.1",
        created_at: "1970-01-01T00:00:00Z",
      },
      { ...anthropicModel("claude-x", "X", "2025-01-01T00:00:00Z", true), capabilities: null },
    ],
    has_more: false,
    first_id: "claude-2.1",
    last_id: "claude-x",
  };
  assert.deepEqual(readAnthropicModels(page), [
    {
      id: "claude-2.1",
      created: null,
      contextLength: null,
      imageInput: null,
      functionCalling: null,
    },
    {
      id: "claude-x",
      created: Date.UTC(2025, 0, 1) / 1000,
      contextLength: 200000,
      imageInput: null,
      functionCalling: null,
    },
  ]);
});

Deno.test("Gemini: GET /v1beta/models with x-goog-api-key, every page read through pageToken; only generateContent models, models/ taken off", async () => {
  await using fake = startFakeGemini();
  fake.listPageMax = 2;
  const provider = new GeminiProvider(providerDeps("gemini", fake.url, fake.apiKey));
  const models = await provider.listModels(new AbortController().signal);
  assert.deepEqual(fake.violations, []);
  assert.equal(fake.received.length, 3);
  assert.ok(fake.received.every((r) => r.method === "GET" && r.path === "/v1beta/models"));
  assert.deepEqual(ids(models), ["gemini-up", "gemini-2.5-flash"]);
  assert.deepEqual(models[1], {
    id: "gemini-2.5-flash",
    created: null,
    contextLength: 1048576,
    imageInput: null,
    functionCalling: null,
  });
  assert.deepEqual(
    readGeminiModels({ models: [geminiModel("aqa", ["generateAnswer"], false)] }),
    [],
  );
});

Deno.test("a listing the upstream refuses is the gateway's error, without the key", async () => {
  await using fake = startFakeGemini();
  const deps = providerDeps("gemini", fake.url, "wrong-key-0123456789", { max_retries: 0 });
  const provider = new GeminiProvider(deps);
  await assert.rejects(
    () => provider.listModels(new AbortController().signal),
    (e: Error) => /refused the gateway's credentials/.test(e.message),
  );
  assert.ok(!deps.output.err.includes("wrong-key-0123456789"));
  assert.ok(!deps.output.out.includes("wrong-key-0123456789"));
});
