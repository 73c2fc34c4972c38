/**
 * The floor of a gateway with an HTTP/1.1 server of its own, for the paced rows: the same relay
 * as `js_stream_floor.ts` (Switchyard's HTTP client to UPSTREAM, each piece of the upstream's
 * body written as it came), answering over `Deno.listen` sockets with its own chunked framing
 * instead of through `Deno.serve` and a JavaScript stream. It parses no more of a request than
 * wrk sends (a head with a Content-Length, keep-alive) and is no server for anything else. The
 * distance from it to `js_stream_floor.ts` is what `Deno.serve` charges for a body that
 * JavaScript writes chunk by chunk.
 *
 *   UPSTREAM=http://127.0.0.1:9100 PORT=9200 deno run -A bench/http1_floor.ts
 */
import { NativeHttpClient } from "../src/http/client/native.ts";

const upstream = Deno.env.get("UPSTREAM") ?? "http://127.0.0.1:9100";
const port = Number(Deno.env.get("PORT") ?? 9200);
const client = new NativeHttpClient();
const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder();
const HEAD = encoder.encode(
  "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
);
const LAST_CHUNK = encoder.encode("0\r\n\r\n");
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/** `piece` as one chunk of a chunked body: size line, data, CRLF. */
function chunk(piece: Uint8Array): Uint8Array {
  const size = encoder.encode(piece.length.toString(16) + "\r\n");
  const out = new Uint8Array(size.length + piece.length + 2);
  out.set(size);
  out.set(piece, size.length);
  out.set([13, 10], size.length + piece.length);
  return out;
}

/** Answers one request: the upstream's answer relayed as a chunked stream. */
async function relay(conn: Deno.Conn, body: string): Promise<void> {
  const answer = await client.request({
    method: "POST",
    url: `${upstream}/v1/chat/completions`,
    headers: { "content-type": "application/json" },
    body,
    signal: new AbortController().signal,
  });
  try {
    await writeAll(conn, HEAD);
    for (;;) {
      const piece = answer.take();
      if (piece === null) break;
      if (piece === undefined) await answer.more();
      else await writeAll(conn, chunk(piece));
    }
    await writeAll(conn, LAST_CHUNK);
  } catch (e) {
    answer.cancel();
    throw e;
  }
}

/** Serves one connection's requests in turn until the client closes it. */
async function serve(conn: Deno.Conn): Promise<void> {
  let buffer = new Uint8Array(16 * 1024);
  let filled = 0;
  for (;;) {
    const text = latin1.decode(buffer.subarray(0, filled));
    const headEnd = text.indexOf("\r\n\r\n");
    if (headEnd >= 0) {
      const length = Number(CONTENT_LENGTH.exec(text.slice(0, headEnd + 2))?.[1] ?? 0);
      const end = headEnd + 4 + length;
      if (filled >= end) {
        await relay(conn, utf8.decode(buffer.subarray(headEnd + 4, end)));
        buffer.copyWithin(0, end, filled);
        filled -= end;
        continue;
      }
    }
    if (filled === buffer.length) {
      const bigger = new Uint8Array(buffer.length * 2);
      bigger.set(buffer);
      buffer = bigger;
    }
    const n = await conn.read(buffer.subarray(filled));
    if (n === null) return;
    filled += n;
  }
}

for await (const conn of Deno.listen({ port, hostname: "127.0.0.1" })) {
  serve(conn).catch(() => {}).finally(() => {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  });
}
