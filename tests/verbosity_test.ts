/**
 * `verbosity` (chat completions) and `text.verbosity` (Responses) through the canonical model:
 * sent on to OpenAI-style upstreams, named as dropped by the back ends that have no such field,
 * and a bad value a 400 naming the field.
 */
import assert from "node:assert/strict";
import { parseChatRequest } from "../src/api/chat_completions/request.ts";
import { parseResponsesRequest } from "../src/api/responses/request.ts";
import { ApiError } from "../src/errors.ts";
import { toAnthropicRequest } from "../src/providers/anthropic/request.ts";
import { toGeminiRequest } from "../src/providers/gemini/request.ts";
import { toOpenAIRequest } from "../src/providers/openai/request.ts";
import { chatRequest } from "./support/provider_call.ts";

const MESSAGES = [{ role: "user", content: "hi" }];

Deno.test("verbosity: both doors read it into the canonical options", () => {
  assert.equal(parseChatRequest({ model: "m", messages: MESSAGES }).options.verbosity, undefined);
  assert.equal(
    parseChatRequest({ model: "m", messages: MESSAGES, verbosity: "low" }).options.verbosity,
    "low",
  );
  const responses = parseResponsesRequest({ model: "m", input: "hi", text: { verbosity: "high" } });
  assert.equal(responses.options.verbosity, "high");
});

Deno.test("verbosity: a bad value is a 400 naming the field, at either door", () => {
  const param = (parse: () => unknown) => {
    try {
      parse();
    } catch (e) {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 400);
      return e.param;
    }
    throw new Error("accepted");
  };
  assert.equal(
    param(() => parseChatRequest({ model: "m", messages: MESSAGES, verbosity: "loud" })),
    "verbosity",
  );
  assert.equal(
    param(() => parseResponsesRequest({ model: "m", input: "hi", text: { verbosity: 3 } })),
    "text.verbosity",
  );
});

Deno.test("verbosity: an OpenAI-style upstream gets it; Anthropic and Gemini name it dropped", () => {
  const req = chatRequest({}, { verbosity: "medium" });
  const openai = toOpenAIRequest(req, {
    upstreamModel: "gpt-up",
    stream: false,
    maxTokensField: "max_tokens",
  });
  assert.equal(openai.body.verbosity, "medium");
  assert.ok(!openai.dropped.includes("verbosity"));
  const anthropicDropped = new Set<string>();
  const anthropic = toAnthropicRequest(req, "claude-up", false, anthropicDropped).body;
  assert.equal("verbosity" in anthropic, false);
  assert.ok(anthropicDropped.has("verbosity"));
  const geminiDropped = new Set<string>();
  const gemini = toGeminiRequest(req, geminiDropped);
  assert.equal(JSON.stringify(gemini).includes("verbosity"), false);
  assert.ok(geminiDropped.has("verbosity"));
  // Without it, nobody reports it.
  const plain = new Set<string>();
  toAnthropicRequest(chatRequest(), "claude-up", false, plain);
  assert.equal(plain.has("verbosity"), false);
});
