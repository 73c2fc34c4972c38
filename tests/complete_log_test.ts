/**
 * The log misses nothing (issue 17), on a real `main.ts` process: a client that leaves a stream
 * is logged with the tokens streamed so far (estimated and marked when the back end had not
 * counted them), and requests still open when the shutdown's grace period ends are logged
 * before the process exits.
 */
import assert from "node:assert/strict";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { startGatewayProcess } from "./support/gateway_process.ts";

/** Starts a stream and reads it until `contents` pieces of content arrived; returns their
 * text and the reader (still open). */
async function readContent(url: string, model: string, contents: number) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      stream: true,
      messages: [{ role: "user", content: "Tell me a long story about a lighthouse keeper." }],
    }),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const pieces: string[] = [];
  while (pieces.length < contents) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended early");
    buffer += value;
    const events = buffer.split("\n\n");
    buffer = events.pop()!;
    for (const event of events) {
      if (!event.startsWith("data: {")) continue;
      const content = JSON.parse(event.slice(6)).choices[0]?.delta?.content;
      if (typeof content === "string" && content !== "") pieces.push(content);
    }
  }
  return { text: pieces.join(""), reader, requestId: res.headers.get("x-request-id") };
}

Deno.test("a client that leaves a stream is logged 499 with the tokens streamed so far", async () => {
  await using openai = startFakeOpenAI();
  await using anthropic = startFakeAnthropic();
  // Each fake stalls after three pieces of content, until the caller leaves.
  openai.faults = [{ stallAfterEvents: 1 + 3 }];
  anthropic.faults = [{ stallAfterEvents: 3 + 3 }];
  const gateway = await startGatewayProcess(openai, anthropic);
  try {
    const expected: Record<string, string> = {};
    for (const model of ["oa-chat", "an-chat"]) {
      const { text, reader, requestId } = await readContent(gateway.url, model, 3);
      await reader.cancel();
      assert.ok(requestId);
      expected[requestId] = text;
    }
    for (const [requestId, text] of Object.entries(expected)) {
      const record = await gateway.record((r) => r.request_id === requestId);
      assert.equal(record.status, 499);
      assert.equal(record.error, "client_disconnected");
      assert.equal(record.stream, true);
      assert.equal(record.estimated, true);
      assert.equal(record.completion_tokens, Math.ceil(text.length / 4), JSON.stringify(record));
      if (record.model === "an-chat") {
        // Anthropic counted the input in message_start: that count is kept.
        assert.equal(typeof record.prompt_tokens, "number");
        assert.ok((record.prompt_tokens as number) > 0);
      } else {
        assert.equal(record.prompt_tokens, null, "OpenAI counts only at the end");
      }
    }
  } finally {
    const { code, stderr } = await gateway.stop();
    assert.equal(code, 0, stderr);
  }
});

Deno.test("requests still open when the grace period ends are logged 503 shutdown before the exit", async () => {
  await using openai = startFakeOpenAI();
  await using anthropic = startFakeAnthropic();
  openai.faults = [{ stallAfterEvents: 1 + 2 }, { delayMs: 60_000 }];
  const gateway = await startGatewayProcess(openai, anthropic);
  const { text, reader, requestId } = await readContent(gateway.url, "oa-chat", 2);
  const waiting = fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oa-chat", messages: [{ role: "user", content: "Hello?" }] }),
  }).then((r) => r.text(), (e: Error) => e);
  while (openai.received.length < 2) await new Promise((r) => setTimeout(r, 10));
  const before = gateway.records.length;
  const { code, stderr } = await gateway.stop();
  assert.equal(code, 0, stderr);
  assert.match(stderr, /shutting down/);
  await reader.cancel().catch(() => {});
  assert.ok((await waiting) instanceof Error, "the waiting client's connection was cut");
  // (The start-up's /healthz poll may be read from stdout only now.)
  const logged = gateway.records.slice(before).filter((r) => r.path !== "/healthz");
  assert.equal(logged.length, 2, JSON.stringify(logged));
  const stream = logged.find((r) => r.request_id === requestId)!;
  assert.deepEqual(
    [stream.status, stream.error, stream.reason, stream.estimated, stream.completion_tokens],
    [503, "server_shutdown", "shutdown", true, Math.ceil(text.length / 4)],
  );
  const other = logged.find((r) => r.request_id !== requestId)!;
  assert.deepEqual(
    [other.status, other.error, other.reason, other.stream, other.completion_tokens],
    [503, "server_shutdown", "shutdown", undefined, null],
  );
});
