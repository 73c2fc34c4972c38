import assert from "node:assert/strict";
import { cacheKey, stableJson } from "../../src/cache/key.ts";
import { type CanonicalRequest, defaultOptions } from "../../src/canonical/conversation.ts";

function request(patch: (req: CanonicalRequest) => void = () => {}): CanonicalRequest {
  const req: CanonicalRequest = {
    model: "m",
    messages: [{ role: "user", parts: [{ type: "text", text: "hello" }] }],
    options: defaultOptions(),
    stream: false,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
  };
  patch(req);
  return req;
}

Deno.test("the key is a SHA-256 in hex, the same for the same request", () => {
  const key = cacheKey(request());
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(cacheKey(request()), key);
});

Deno.test("what does not change the answer does not change the key", () => {
  const key = cacheKey(request());
  const same: [string, (r: CanonicalRequest) => void][] = [
    ["stream", (r) => r.stream = true],
    ["includeUsage", (r) => r.includeUsage = true],
    ["user", (r) => r.options.user = "alice"],
    ["metadata", (r) => r.options.metadata = { a: "b" }],
    ["the door (no extras)", (r) => r.extras = { protocol: "anthropic_messages", fields: {} }],
    ["a prompt-cache marker", (r) => {
      r.messages[0]!.parts = [{ type: "text", text: "hello", cache: { type: "ephemeral" } }];
    }],
    ["an option's key order", (r) => {
      const { maxTokens, ...rest } = r.options;
      r.options = { ...rest, maxTokens };
    }],
  ];
  for (const [what, patch] of same) assert.equal(cacheKey(request(patch)), key, what);
});

Deno.test("what changes the answer changes the key", () => {
  const key = cacheKey(request());
  const other: [string, (r: CanonicalRequest) => void][] = [
    ["model", (r) => r.model = "n"],
    ["text", (r) => r.messages[0]!.parts = [{ type: "text", text: "hello!" }]],
    ["role", (r) => r.messages[0]!.role = "system"],
    ["another message", (r) => r.messages.push({ role: "assistant", parts: [] })],
    ["temperature", (r) => r.options.temperature = 0.5],
    ["top_p", (r) => r.options.topP = 0.5],
    ["max tokens", (r) => r.options.maxTokens = 100],
    ["max tokens given", (r) => r.options.maxTokensGiven = true],
    ["stop", (r) => r.options.stop = ["x"]],
    ["seed", (r) => r.options.seed = 1],
    ["reasoning", (r) => r.options.reasoning = { effort: "high" }],
    ["output", (r) => r.options.output = { type: "json" }],
    ["tools", (r) => r.options.tools = [{ name: "f" }]],
    ["tool choice", (r) => r.options.toolChoice = "required"],
    ["parallel tool calls", (r) => r.options.parallelToolCalls = false],
    ["extras", (r) => r.extras = { protocol: "openai_chat", fields: { logprobs: true } }],
  ];
  const keys = new Set([key]);
  for (const [what, patch] of other) {
    const changed = cacheKey(request(patch));
    assert.notEqual(changed, key, what);
    keys.add(changed);
  }
  assert.equal(keys.size, other.length + 1);
});

Deno.test("stableJson orders keys at every depth and leaves undefined members out", () => {
  assert.equal(
    stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } }),
    '{"a":{"d":[{"y":2,"z":1}]},"b":1}',
  );
});

Deno.test("stableJson writes what JSON.stringify writes for values whose keys are in order", () => {
  const values: unknown[] = [
    null,
    1.5,
    'a"\n\u2028',
    [1, null, "x", [], {}],
    { a: [{ b: true, c: { d: "e" } }], f: -0, g: 1e21 },
    [undefined],
  ];
  for (const value of values) assert.equal(stableJson(value), JSON.stringify(value));
});
