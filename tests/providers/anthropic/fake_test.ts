/** The fake Anthropic upstream refuses what Anthropic refuses about thinking, signatures,
 * prompt caching and structured outputs, so a translation mistake fails a test. */
import assert from "node:assert/strict";
import { checkAnthropicRequest } from "../../support/fake_anthropic.ts";
import {
  isRedactedThinkingData,
  redactedThinkingData,
  thinkingSignature,
} from "../../support/fake_anthropic_signature.ts";
import { FakePromptCache } from "../../support/fake_anthropic_cache.ts";
import { dataUrl, pngBytes } from "../../support/images.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;
const KEY = "k";
const MODEL = "claude-sonnet-4-5";
const HEADERS = new Headers({
  "x-api-key": KEY,
  "anthropic-version": "2023-06-01",
  "content-type": "application/json",
});

type Body = Record<string, unknown>;

function check(body: Body): string[] {
  return checkAnthropicRequest(
    HEADERS,
    { model: MODEL, max_tokens: 4096, messages: [{ role: "user", content: "hi" }], ...body },
    KEY,
    "2023-06-01",
  );
}

const THINKING = { type: "thinking", thinking: "Paris, then.", signature: "" };
THINKING.signature = thinkingSignature(MODEL, THINKING.thinking);
const REDACTED = { type: "redacted_thinking", data: redactedThinkingData(MODEL, "secret") };
const TOOL_USE = { type: "tool_use", id: "t1", name: "f", input: {} };
const TOOLS = [{ name: "f", input_schema: { type: "object" } }];
const ENABLED = { type: "enabled", budget_tokens: 1024 };

/** A tool loop whose assistant turn has `assistant` blocks. */
function loop(...assistant: Body[]): Body {
  return {
    tools: TOOLS,
    messages: [
      { role: "user", content: "weather?" },
      { role: "assistant", content: assistant },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "18C" }] },
    ],
  };
}

Deno.test("the Anthropic fake accepts thinking, caching and structured outputs done right", () => {
  const cases: [string, Body][] = [
    ["signed thinking in a tool loop", { thinking: ENABLED, ...loop(THINKING, TOOL_USE) }],
    ["redacted thinking first", { thinking: ENABLED, ...loop(REDACTED, THINKING, TOOL_USE) }],
    ["thinking history without thinking on", loop(THINKING, TOOL_USE)],
    ["adaptive on 4.7", { model: "claude-opus-4-7", thinking: { type: "adaptive" } }],
    ["thinking with temperature 1 and top_p 0.95", { thinking: ENABLED, temperature: 1 }],
    ["four breakpoints", {
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }],
      tools: [{ ...TOOLS[0], cache_control: { type: "ephemeral" } }],
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "a", cache_control: { type: "ephemeral" } },
          {
            type: "image",
            source: { type: "url", url: "https://example.com/a.png" },
            cache_control: { type: "ephemeral" },
          },
        ],
      }],
    }],
    ["structured outputs", {
      output_config: {
        format: {
          type: "json_schema",
          schema: {
            type: "object",
            properties: { a: { type: "string", format: "date" } },
            additionalProperties: false,
          },
        },
      },
    }],
    ["a strict tool", {
      tools: [{
        name: "f",
        strict: true,
        input_schema: { type: "object", properties: {}, additionalProperties: false },
      }],
    }],
    ["an image in a tool result", {
      tools: TOOLS,
      messages: [
        { role: "user", content: "draw" },
        { role: "assistant", content: [TOOL_USE] },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "t1",
            content: [{
              type: "image",
              source: { type: "base64", media_type: "image/png", data: PNG_1x1 },
            }],
          }],
        },
      ],
    }],
  ];
  for (const [name, body] of cases) assert.deepEqual(check(body), [], name);
});

Deno.test("the Anthropic fake refuses each thinking, caching and structured-output mistake", () => {
  const altered = { ...THINKING, thinking: "Rome, then." };
  const cases: [string, Body, RegExp][] = [
    ["altered thinking", loop(altered, TOOL_USE), /Invalid `signature` in `thinking` block/],
    [
      "another model's thinking",
      { model: "claude-opus-4-1", ...loop(THINKING, TOOL_USE) },
      /Invalid `signature`/,
    ],
    [
      "no signature",
      loop({ type: "thinking", thinking: "x" }, TOOL_USE),
      /signature: Field required/,
    ],
    [
      "altered redacted data",
      loop({ ...REDACTED, data: REDACTED.data + "A" }, TOOL_USE),
      /Invalid `data`/,
    ],
    ["thinking after a tool use", loop(TOOL_USE, THINKING), /must come first/],
    ["thinking in a user turn", { messages: [{ role: "user", content: [THINKING] }] }, /assistant/],
    [
      "a tool loop without thinking, thinking on",
      { thinking: ENABLED, ...loop(TOOL_USE) },
      /a final `assistant` message must start with a thinking block/,
    ],
    ["a budget under 1024", { thinking: { type: "enabled", budget_tokens: 512 } }, /1024/],
    ["a budget not under max_tokens", { thinking: ENABLED, max_tokens: 1024 }, /max_tokens/],
    ["temperature with thinking", { thinking: ENABLED, temperature: 0.5 }, /temperature/],
    ["top_k with thinking", { thinking: ENABLED, top_k: 5 }, /top_k/],
    ["low top_p with thinking", { thinking: ENABLED, top_p: 0.5 }, /top_p/],
    [
      "a forced tool with thinking",
      { thinking: ENABLED, tools: TOOLS, tool_choice: { type: "any" } },
      /tool_choice forces tool use/,
    ],
    ["enabled thinking on 4.7", { model: "claude-opus-4-7", thinking: ENABLED }, /adaptive/],
    [
      "adaptive thinking on 3.7",
      { model: "claude-3-7-sonnet", thinking: { type: "adaptive" } },
      /adaptive/,
    ],
    [
      "temperature on a fixed-sampling model",
      { model: "claude-opus-4-7", temperature: 0.2 },
      /1.0/,
    ],
    ["temperature and top_p", { temperature: 0.5, top_p: 0.9 }, /both/],
    [
      "five breakpoints",
      {
        system: [1, 2, 3, 4, 5].map((n) => ({
          type: "text",
          text: `s${n}`,
          cache_control: { type: "ephemeral" },
        })),
      },
      /maximum of 4 blocks/,
    ],
    [
      "a bad cache_control",
      { system: [{ type: "text", text: "s", cache_control: { type: "persistent" } }] },
      /ephemeral/,
    ],
    [
      "cache_control on thinking",
      loop({ ...THINKING, cache_control: { type: "ephemeral" } }, TOOL_USE),
      /Extra inputs/,
    ],
    [
      "structured outputs on a model without them",
      {
        model: "claude-3-5-haiku-latest",
        output_config: { format: { type: "json_schema", schema: { type: "string" } } },
      },
      /not supported/,
    ],
    [
      "a bound in a structured-output schema",
      {
        output_config: {
          format: { type: "json_schema", schema: { type: "integer", minimum: 1 } },
        },
      },
      /'minimum' is not supported/,
    ],
    [
      "an open object in a strict tool",
      { tools: [{ name: "f", strict: true, input_schema: { type: "object" } }] },
      /additionalProperties/,
    ],
    ["an http image URL", {
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "http://x/a.png" } }],
      }],
    }, /https/],
    ["metadata beyond user_id", { metadata: { user_id: "u", team: "t" } }, /Extra inputs/],
  ];
  for (const [name, body, expected] of cases) {
    const bad = check(body);
    assert.ok(bad.some((b) => expected.test(b)), `${name}: ${JSON.stringify(bad)}`);
  }
});

Deno.test("the fake's signatures are bound to the model and the exact text", () => {
  const sig = thinkingSignature("m", "text");
  assert.notEqual(sig, thinkingSignature("m2", "text"));
  assert.notEqual(sig, thinkingSignature("m", "text "));
  const data = redactedThinkingData("m", "hidden ☃");
  assert.equal(isRedactedThinkingData("m", data), true);
  assert.equal(isRedactedThinkingData("m2", data), false);
  assert.equal(isRedactedThinkingData("m", data.replace(/^./, "x")), false);
  assert.equal(isRedactedThinkingData("m", "no-dot"), false);
});

Deno.test("the fake's prompt cache reads the longest prefix seen and writes the rest", () => {
  const cache = new FakePromptCache();
  const marked = (text: string) => ({
    type: "text",
    text,
    cache_control: { type: "ephemeral" },
  });
  const words = (prefix: Body) => JSON.stringify(prefix.messages).length;
  const one = {
    model: "m",
    messages: [{ role: "user", content: [marked("a")] }],
  };
  const two = {
    model: "m",
    messages: [
      { role: "user", content: [marked("a")] },
      { role: "assistant", content: "b" },
      { role: "user", content: [marked("c")] },
    ],
  };
  const first = cache.use(one, words);
  assert.deepEqual(first, { read: 0, written: words(one), ttl: "5m" });
  const second = cache.use(two, words);
  assert.equal(second.read, words(one));
  assert.equal(second.written, words(two) - words(one));
  assert.deepEqual(cache.use({ model: "m", messages: [{ role: "user", content: "x" }] }, words), {
    read: 0,
    written: 0,
    ttl: "5m",
  });
  const small = new FakePromptCache(1_000_000);
  assert.deepEqual(small.use(one, words), { read: 0, written: 0, ttl: "5m" });
});
