/** The Gemini adapter against the fake Gemini upstream (which checks the wire format and
 * answers byte for byte as Gemini does, streams split into small slices): errors, blocked
 * prompts, thinking, paths; and the style's configuration. */
import assert from "node:assert/strict";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import { parseConfig } from "../../../src/config/parse.ts";
import {
  GeminiProvider,
  mapGeminiError,
  parseGeminiError,
} from "../../../src/providers/gemini/provider.ts";
import { modelPath } from "../../../src/providers/gemini/model_path.ts";
import { type FakeGemini, startFakeGemini } from "../../support/fake_gemini.ts";
import {
  assembleEvents,
  callContext,
  chatRequest,
  collect,
  modelRecord,
  providerDeps,
} from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";
import type { CanonicalRequest } from "../../../src/canonical/conversation.ts";

function adapter(fake: FakeGemini, apiKey = fake.apiKey) {
  const deps = providerDeps("gemini", fake.url, apiKey, { max_retries: 0 });
  return { provider: new GeminiProvider(deps), output: deps.output };
}

const context = (upstream = "gemini-3-flash") =>
  callContext(modelRecord({ upstream_model: upstream }));

async function both(provider: GeminiProvider, req: CanonicalRequest) {
  const whole = await provider.chat(req, context());
  const got = assembleEvents(
    await collect(provider.chatStream({ ...req, stream: true }, context())),
  );
  const streamed: CanonicalResult = { parts: got.parts, finish: got.finish!, usage: got.usage! };
  if (got.detail !== undefined) streamed.stopDetail = got.detail;
  return { whole, streamed };
}

Deno.test("gemini adapter: a bad key (Gemini's 400 API_KEY_INVALID) is a 502 for the operator", async () => {
  await using fake = startFakeGemini();
  const { provider, output } = adapter(fake, "AIza-wrong-key-SECRET");
  const error = await gatewayError(() => provider.chat(chatRequest(), context()));
  assert.equal(error.status, 502);
  assert.match(error.message, /refused the gateway's credentials \(HTTP 400 API_KEY_INVALID\)/);
  assert.ok(!JSON.stringify(error.toBody()).includes("SECRET"));
  assert.ok(!output.err.includes("SECRET"));
  assert.equal(fake.received.length, 1, "not retried");
});

Deno.test("gemini adapter: INVALID_ARGUMENT is a 400 with Gemini's message, our model id in it", async () => {
  await using fake = startFakeGemini();
  fake.faults = [{
    status: 400,
    message: "* GenerateContentRequest.model: unexpected model name format for gemini-3-flash",
  }];
  const { provider } = adapter(fake);
  const error = await gatewayError(() => provider.chat(chatRequest(), context()));
  assert.equal(error.status, 400);
  assert.equal(error.code, "INVALID_ARGUMENT");
  assert.equal(
    error.message,
    "* GenerateContentRequest.model: unexpected model name format for gw-model",
  );
});

Deno.test("gemini adapter: the error table for Gemini's statuses", async () => {
  await using fake = startFakeGemini();
  const { provider } = adapter(fake);
  const rows: [number, string | undefined, number, RegExp][] = [
    [429, undefined, 429, /rate limiting/],
    [403, undefined, 502, /credentials/],
    [400, "FAILED_PRECONDITION", 502, /cannot serve the gateway/],
    [400, "API_KEY_INVALID", 502, /credentials/],
    [500, undefined, 502, /HTTP 500 INTERNAL/],
    [503, undefined, 502, /HTTP 503 UNAVAILABLE/],
    [504, undefined, 504, /own deadline/],
  ];
  for (const [status, reason, expected, message] of rows) {
    const kind = reason === undefined
      ? {}
      : reason === "API_KEY_INVALID"
      ? { errorCode: reason }
      : { errorType: reason };
    fake.faults = [{ status, ...kind }];
    const error = await gatewayError(() => provider.chat(chatRequest(), context()));
    assert.equal(error.status, expected, `${status} ${reason}`);
    assert.match(error.message, message);
  }
  assert.deepEqual(
    parseGeminiError({
      error: {
        code: 400,
        message: "m",
        status: "INVALID_ARGUMENT",
        details: [{ "@type": "type.googleapis.com/google.rpc.BadRequest" }, {
          reason: "API_KEY_INVALID",
        }],
      },
    }),
    { message: "m", type: "INVALID_ARGUMENT", code: "API_KEY_INVALID", param: null },
  );
  assert.equal(mapGeminiError("p", 400, parseGeminiError({ error: { status: "X" } })), null);
});

Deno.test("gemini adapter: an error frame mid-stream: RESOURCE_EXHAUSTED is a 429, others a 502", async () => {
  await using fake = startFakeGemini();
  const { provider } = adapter(fake);
  const frame = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;
  const text = frame({ candidates: [{ content: { role: "model", parts: [{ text: "Hi" }] } }] });
  const rows: [string, number, RegExp][] = [
    ["RESOURCE_EXHAUSTED", 429, /rate limiting requests: Quota exceeded/],
    ["INTERNAL", 502, /failed mid-stream \(INTERNAL\): Quota exceeded/],
  ];
  for (const [status, expected, message] of rows) {
    fake.faults = [{
      garbage: text + frame({ error: { code: 429, message: "Quota exceeded", status } }),
    }];
    const events: unknown[] = [];
    const error = await gatewayError(async () => {
      for await (const batch of provider.chatStream(chatRequest({ stream: true }), context())) {
        events.push(...batch);
      }
    });
    assert.equal(error.status, expected);
    assert.match(error.message, message);
    assert.ok(events.length > 0, "the text before it was delivered");
  }
});

Deno.test("gemini adapter: a blocked prompt and a safety stop end with content_filter", async () => {
  await using fake = startFakeGemini({ sliceBytes: 5 });
  const { provider } = adapter(fake);
  fake.turns = [{ blockReason: "PROHIBITED_CONTENT" }, { blockReason: "PROHIBITED_CONTENT" }];
  const blocked = await both(provider, chatRequest());
  for (const r of [blocked.whole, blocked.streamed]) {
    assert.deepEqual([r.parts, r.finish, r.stopDetail], [
      [],
      "content_filter",
      "PROHIBITED_CONTENT",
    ]);
  }
  fake.script = () => ({ text: "one two three four", toolCalls: [] });
  fake.turns = [{ finishReason: "SAFETY" }, { finishReason: "SAFETY" }];
  const safety = await both(provider, chatRequest());
  for (const r of [safety.whole, safety.streamed]) {
    assert.deepEqual(r.parts, [{ type: "text", text: "one two " }]);
    assert.deepEqual([r.finish, r.stopDetail], ["content_filter", "SAFETY"]);
  }
  assert.deepEqual(fake.violations, []);
});

Deno.test("gemini adapter: thinking comes back as reasoning with its tokens, stream or not", async () => {
  await using fake = startFakeGemini({ sliceBytes: 4 });
  const { provider } = adapter(fake);
  const req = chatRequest({}, { reasoning: { effort: "minimal" } });
  const { whole, streamed } = await both(provider, req);
  assert.deepEqual(streamed, { parts: whole.parts, finish: whole.finish, usage: whole.usage });
  assert.deepEqual(whole.parts.map((p) => p.type), ["reasoning", "text", "reasoning"]);
  assert.equal(
    whole.parts[0]?.type === "reasoning" && whole.parts[0].text,
    "Thinking about: Hello there",
  );
  assert.deepEqual(whole.usage, { input: 2, output: 8, reasoning: 4 });
  assert.deepEqual(fake.violations, []);
});

Deno.test("gemini adapter: the model's path, with or without a models/ prefix", async () => {
  assert.equal(
    modelPath("gemini-2.5-flash", "generateContent"),
    "/v1beta/models/gemini-2.5-flash:generateContent",
  );
  assert.equal(
    modelPath("models/gemini-2.5-pro", "countTokens"),
    "/v1beta/models/gemini-2.5-pro:countTokens",
  );
  await using fake = startFakeGemini();
  const { provider } = adapter(fake);
  await provider.chat(chatRequest(), context("models/gemini-2.5-pro"));
  assert.equal(fake.last.path, "/v1beta/models/gemini-2.5-pro:generateContent");
});

Deno.test("gemini config: the style, its default base URL and what it can serve", () => {
  const config = (model: Record<string, unknown>) =>
    parseConfig(
      {
        providers: [{ id: "gem", style: "gemini", api_key_env: "GEMINI_API_KEY" }],
        models: [{ id: "g", provider: "gem", upstream_model: "gemini-2.5-flash", ...model }],
      },
      "switchyard.json",
    );
  const ok = config({ chat_completions: true, image_input: true, function_calling: true });
  assert.equal(ok.providers[0]!.base_url, "https://generativelanguage.googleapis.com");
  assert.throws(() => config({ moderation: true }), /style gemini\) cannot serve moderation/);
  assert.throws(() => config({ image_generation: true }), /cannot generate images/);
});
