/**
 * Keep-alive survives request bodies of every size. Deno closes a connection after the answer
 * when JavaScript did not read the request's body to its end; bodies over 64 KiB are read as a
 * stream (`http/body.ts`), whose last read (the end) must still be made. Stopping once the
 * declared length had come cost a new connection for every such request.
 */
import assert from "node:assert/strict";
import { rawHead } from "./support/http.ts";
import { startServer, testConfig } from "./support/server.ts";

/** Sends `body` as a chat over `conn` and reads the whole answer; returns its head. */
async function chat(conn: Deno.TcpConn, port: number, content: string): Promise<string> {
  const body = new TextEncoder().encode(JSON.stringify({
    model: "sim-chat",
    max_tokens: 8,
    messages: [{ role: "user", content }],
  }));
  const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
  const request = new Uint8Array([...new TextEncoder().encode(head), ...body]);
  for (let at = 0; at < request.length;) at += await conn.write(request.subarray(at));
  let received = new Uint8Array(0);
  const buf = new Uint8Array(64 * 1024);
  for (;;) {
    const text = new TextDecoder().decode(received);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1]);
      if (received.length >= end + 4 + length) return text.slice(0, end);
    }
    const n = await conn.read(buf);
    if (n === null) throw new Error(`the server closed the connection after: ${text}`);
    received = new Uint8Array([...received, ...buf.subarray(0, n)]);
  }
}

for (const chars of [1_000, 200_000]) {
  Deno.test(`a connection carries one chat after another, with ${chars}-character prompts`, async () => {
    await using server = await startServer();
    const port = Number(new URL(server.url).port);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      for (let i = 0; i < 3; i++) {
        const head = await chat(conn, port, `${i} `.padEnd(chars, "lorem ipsum "));
        assert.match(head, /^HTTP\/1\.1 200/);
        assert.doesNotMatch(head, /\r\nconnection: *close/i);
      }
    } finally {
      conn.close();
    }
  });
}

Deno.test("a 408 says Connection: close once (Deno's server says it; the gateway does not repeat it)", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.server = { ...(raw.server as Record<string, unknown>), body_timeout_ms: 200 };
    }),
  });
  const port = Number(new URL(server.url).port);
  const text = await rawHead(
    port,
    "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n" +
      "content-type: application/json\r\ncontent-length: 100\r\n\r\n{",
  );
  assert.match(text, /^HTTP\/1\.1 408/);
  const lines = text.split("\r\n\r\n")[0]!.split("\r\n");
  assert.equal(lines.filter((line) => /^connection: *close$/i.test(line)).length, 1);
});
