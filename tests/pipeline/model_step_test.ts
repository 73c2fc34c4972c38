import assert from "node:assert/strict";
import type { ModelRecord } from "../../src/catalogue/model.ts";
import { aroundModel, type ModelStep } from "../../src/pipeline/model_step.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import type { Provider } from "../../src/providers/types.ts";
import { startGateway } from "../support/gateway.ts";

/** A step that answers every call itself ("from the step"), recording what it saw. */
function answeringStep(seen: string[]): ModelStep {
  return {
    around(provider, _ctx, record) {
      return {
        ...provider,
        id: provider.id,
        chat(req) {
          seen.push(`${record.id}:${req.messages.length}`);
          return Promise.resolve({
            parts: [{ type: "text", text: "from the step" }],
            finish: "stop",
            usage: { input: 3, output: 3 },
          });
        },
        async *chatStream() {
          seen.push(`${record.id}:stream`);
          yield [
            { type: "start" },
            { type: "block_start", index: 0, block: { type: "text" } },
            { type: "block_delta", index: 0, delta: { type: "text", text: "from the step" } },
            { type: "block_stop", index: 0 },
            { type: "usage", usage: { input: 3, output: 3 } },
            { type: "finish", reason: "stop" },
          ];
        },
      };
    },
  };
}

Deno.test("a model step wraps steps in order, the first listed outermost, and skips a step that does nothing", () => {
  const named = (name: string, acts: boolean): ModelStep => ({
    around(provider) {
      if (!acts) return null;
      return { ...provider, id: `${name}(${provider.id})` };
    },
  });
  const base = { id: "p" } as Provider;
  const ctx = {} as RequestContext;
  const record = {} as ModelRecord;
  assert.deepEqual(aroundModel([], base, ctx, record), null);
  assert.deepEqual(aroundModel([named("a", false)], base, ctx, record), null);
  const wrapped = aroundModel(
    [named("a", true), named("b", false), named("c", true)],
    base,
    ctx,
    record,
  );
  assert.deepEqual(wrapped?.id, "a(c(p))");
});

Deno.test("a call that a model step wraps goes through it in canonical form, never passed through (Messages door to an Anthropic back end)", async () => {
  await using gw = await startGateway();
  const seen: string[] = [];
  gw.server.app.services.modelSteps = [answeringStep(seen)];
  for (const stream of [false, true]) {
    const res = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "an-chat",
        max_tokens: 50,
        stream,
        messages: [{ role: "user", content: "hello" }],
      }),
    });
    assert.deepEqual(res.status, 200);
    const text = await res.text();
    assert.deepEqual(text.includes("from the step"), true, text);
  }
  assert.deepEqual(seen, ["an-chat:1", "an-chat:stream"]);
  assert.deepEqual(gw.anthropic.received.length, 0);
});

Deno.test("a model step that does nothing for a call leaves it as it was (passed through)", async () => {
  await using gw = await startGateway();
  gw.server.app.services.modelSteps = [{ around: () => null }];
  const res = await fetch(`${gw.server.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: "an-chat",
      max_tokens: 50,
      messages: [{ role: "user", content: "hello" }],
    }),
  });
  assert.deepEqual(res.status, 200);
  await res.body?.cancel();
  assert.deepEqual(gw.anthropic.received.length, 1);
});
