import assert from "node:assert/strict";
import { SemanticIndex, semanticQuestion } from "../../src/cache/semantic.ts";
import { cacheKey } from "../../src/cache/key.ts";
import {
  type CanonicalRequest,
  defaultOptions,
  type Message,
} from "../../src/canonical/conversation.ts";

function request(messages: Message[]): CanonicalRequest {
  return {
    model: "m",
    messages,
    options: defaultOptions(),
    stream: false,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
  };
}

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });

Deno.test("a question's last user turn and the key of everything before it", () => {
  const earlier = [{ role: "system", parts: [{ type: "text", text: "Be brief." }] } as Message];
  const q = semanticQuestion(request([...earlier, user("Hi there")]))!;
  assert.equal(q.text, "Hi there");
  assert.equal(q.prefix, cacheKey(request(earlier)));
  assert.equal(semanticQuestion(request([...earlier, user("Other")]))!.prefix, q.prefix);
  // Agent traffic (a tool result last) and images are matched exactly only.
  assert.equal(
    semanticQuestion(request([{
      role: "tool",
      parts: [{ type: "tool_result", callId: "c", content: [], isError: false }],
    }])),
    null,
  );
  assert.equal(
    semanticQuestion(request([{
      role: "user",
      parts: [{ type: "text", text: "this?" }, {
        type: "image",
        source: { kind: "url", url: "https://x/y.png" },
      }],
    }])),
    null,
  );
  assert.equal(semanticQuestion(request([])), null);
});

Deno.test("the nearest stored question at the threshold or above, in its scope and prefix, unexpired", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = new SemanticIndex(kv);
  const unit = (...v: number[]) => {
    const n = Math.hypot(...v);
    return Float32Array.from(v, (x) => x / n);
  };
  const at = { now: 0, ttlMs: 1000 };
  await index.add("key:a", "p", "k1", unit(1, 0, 0), at);
  await index.add("key:a", "p", "k2", unit(1, 0.2, 0), at);
  await index.add("key:a", "p", "k3", unit(0, 1, 0), at);
  await index.add("key:b", "p", "kb", unit(1, 0.1, 0), at);
  await index.add("key:a", "q", "kq", unit(1, 0.1, 0), at);
  const find = (scope: string, prefix: string, now = 1) =>
    index.nearest(scope, prefix, unit(1, 0.1, 0), { threshold: 0.99, max: 10, now });
  assert.deepEqual((await find("key:a", "p"))?.key, "k2");
  assert.deepEqual((await find("key:b", "p"))?.key, "kb");
  assert.equal(await find("key:c", "p"), null);
  assert.equal(await find("key:a", "p", 1000), null);
  const strict = await index.nearest("key:a", "p", unit(0, 0, 1), {
    threshold: 0.5,
    max: 10,
    now: 1,
  });
  assert.equal(strict, null);
});
