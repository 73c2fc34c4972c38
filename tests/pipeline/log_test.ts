import assert from "node:assert/strict";
import { Logger } from "../../src/log/logger.ts";
import type { KeyRecord } from "../../src/auth/principal.ts";
import { logRecord } from "../../src/pipeline/log.ts";
import { Settler } from "../../src/pipeline/settle.ts";
import { testContext } from "../support/pipeline.ts";
import { CapturedOutput, FakeClock } from "../support/server.ts";

function logged(includeContent: boolean) {
  const output = new CapturedOutput();
  const logger = new Logger({ clock: new FakeClock(), output });
  const settler = new Settler([logRecord(logger, includeContent)], logger);
  const ctx = testContext(new Request("http://localhost/v1/chat/completions", { method: "POST" }), {
    settle: settler,
  });
  return {
    ctx,
    async record() {
      await logger.flush();
      const lines = output.out.trimEnd().split("\n");
      assert.equal(lines.length, 1, "one record per request");
      return JSON.parse(lines[0]!);
    },
  };
}

Deno.test("log: one record when the request settles, from the context and the settlement", async () => {
  const { ctx, record } = logged(false);
  ctx.principal = { kind: "key", key: { id: "key_abc" } as KeyRecord };
  ctx.model = "sim-chat";
  ctx.provider = "sim";
  ctx.usage = { input: 12, output: 7, cachedInput: 4, reasoning: 2 };
  ctx.content = { messages: ["secret"] };
  ctx.settle(200, null);
  ctx.settle(499, "client_disconnected");
  const r = await record();
  assert.deepEqual({ ...r, ms: 0 }, {
    ts: "2026-01-15T12:00:00.000Z",
    request_id: ctx.requestId,
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    ms: 0,
    ip: "127.0.0.1",
    key_id: "key_abc",
    model: "sim-chat",
    provider: "sim",
    prompt_tokens: 12,
    completion_tokens: 7,
    error: null,
  });
  assert.equal(typeof r.ms, "number");
});

Deno.test("log: a stream is marked; content only with include_content; no usage is null tokens", async () => {
  const { ctx, record } = logged(true);
  ctx.stream = true;
  ctx.content = { messages: ["hello"] };
  ctx.settle(502, "upstream_error");
  const r = await record();
  assert.equal(r.stream, true);
  assert.deepEqual(r.content, { messages: ["hello"] });
  assert.equal(r.status, 502);
  assert.equal(r.error, "upstream_error");
  assert.equal(r.prompt_tokens, null);
  assert.equal(r.completion_tokens, null);
  assert.equal(r.key_id, null);
});
