import assert from "node:assert/strict";
import { AnthropicProvider, parseAnthropicError } from "../../src/providers/anthropic.ts";
import { startFakeAnthropic } from "../support/fake_anthropic.ts";
import { callContext, chatRequest, providerDeps } from "../support/provider_call.ts";
import { STYLES } from "../support/provider_styles.ts";

const anthropic = STYLES[1]!;

Deno.test("AnthropicProvider sends x-api-key and anthropic-version, never Authorization", async () => {
  await using fake = startFakeAnthropic({ version: "2023-06-01" });
  const { provider } = anthropic.make(fake.url, fake.apiKey, {
    headers: { "anthropic-beta": "token-efficient-tools-2025-02-19" },
  });
  await provider.chat(chatRequest(), callContext());
  const headers = fake.last.headers;
  assert.equal(headers.get("x-api-key"), fake.apiKey);
  assert.equal(headers.get("anthropic-version"), "2023-06-01");
  assert.equal(headers.get("anthropic-beta"), "token-efficient-tools-2025-02-19");
  assert.equal(headers.has("authorization"), false);
  assert.equal(fake.last.path, "/v1/messages");
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider sends the configured anthropic_version", async () => {
  await using fake = startFakeAnthropic({ version: "2024-01-01" });
  const { provider } = anthropic.make(fake.url, fake.apiKey, { anthropic_version: "2024-01-01" });
  await provider.chat(chatRequest(), callContext());
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider halves a given temperature (1.6 → 0.8) and omits an absent one", async () => {
  await using fake = startFakeAnthropic();
  const { provider } = anthropic.make(fake.url, fake.apiKey);
  await provider.chat(chatRequest({ temperature: 1.6, temperature_given: true }), callContext());
  assert.equal((fake.last.body as Record<string, unknown>).temperature, 0.8);
  await provider.chat(chatRequest(), callContext());
  assert.equal("temperature" in (fake.last.body as object), false);
  assert.deepEqual(fake.violations, []);
});

Deno.test("AnthropicProvider sends max_tokens (default 256) and the upstream model name", async () => {
  await using fake = startFakeAnthropic();
  const { provider } = anthropic.make(fake.url, fake.apiKey);
  await provider.chat(chatRequest(), callContext());
  const body = fake.last.body as Record<string, unknown>;
  assert.equal(body.max_tokens, 256);
  assert.equal(body.model, "upstream-model-v1");
});

Deno.test("AnthropicProvider: a bad tool-call argument string is a 400 before any upstream call", async () => {
  let calls = 0;
  const deps = providerDeps("anthropic", "http://127.0.0.1:9", "k");
  deps.fetch = () => {
    calls++;
    return Promise.reject(new Error("no"));
  };
  const req = chatRequest({
    messages: [
      { role: "user", content: "x" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }],
      },
      { role: "tool", tool_call_id: "c", content: "r" },
    ],
  });
  await assert.rejects(
    () => new AnthropicProvider(deps).chat(req, callContext()),
    (e: { status?: number; param?: string }) =>
      e.status === 400 && e.param === "messages[1].tool_calls[0].function.arguments",
  );
  assert.equal(calls, 0);
});

Deno.test("parseAnthropicError reads the error body", () => {
  assert.deepEqual(
    parseAnthropicError({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: "req_1",
    }),
    { message: "Overloaded", type: "overloaded_error", code: null, param: null },
  );
  assert.equal(parseAnthropicError("<html>").message, null);
});
