/**
 * The Messages front door on a Gemini-style back end (the fake Gemini upstream), as Claude Code
 * uses it: the answer's text is the message's last block (Gemini's signature on its last text
 * part is not sent as a thinking block after it), whole and streamed, and what the client sends
 * back is a request the upstream takes.
 */
import assert from "node:assert/strict";
import { startGateway } from "./support/gateway.ts";
import { checkTranscript, parseTranscript } from "./support/messages_stream.ts";

const HEADERS = { "content-type": "application/json", "anthropic-version": "2023-06-01" };

Deno.test("messages on gemini: with thinking on, the text is the last block, and the message goes back as the upstream takes it", async () => {
  await using gw = await startGateway();
  for (const stream of [false, true]) {
    const first = {
      model: "ge-chat",
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "Say something about lanterns." }],
      stream,
    };
    const res = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify(first),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const blocks = stream
      ? checkTranscript(parseTranscript(await res.text())).blocks
      : (await res.json()).content;
    assert.ok(blocks.length >= 1, JSON.stringify(blocks));
    assert.equal(blocks.at(-1).type, "text", JSON.stringify(blocks));
    assert.ok(blocks.at(-1).text.length > 0);
    // The upstream signed the text: that signature is not a block of its own.
    assert.ok(
      !blocks.some((b: Record<string, unknown>) => b.type === "thinking" && b.thinking === ""),
    );
    const next = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({
        ...first,
        stream: false,
        messages: [
          ...first.messages,
          { role: "assistant", content: blocks },
          { role: "user", content: "And about harbours?" },
        ],
      }),
    });
    assert.equal(next.status, 200, await next.clone().text());
    await next.body?.cancel();
  }
  assert.deepEqual(gw.gemini.violations, []);
});

Deno.test("gemini door on gemini: a call passed through goes as the client wrote it, byte for byte", async () => {
  await using gw = await startGateway();
  const body =
    '{ "contents": [{"role": "user", "parts": [{"text": "caf\\u00e9 \\"model\\""}]}],\n' +
    '  "tools": [{"functionDeclarations": [{"name": "f", "parameters": {"type": "OBJECT"}}]}] }';
  for (const method of ["generateContent", "streamGenerateContent?alt=sse"]) {
    const res = await fetch(`${gw.server.url}/v1beta/models/ge-chat:${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    assert.equal(gw.gemini.last.text, body);
  }
});
