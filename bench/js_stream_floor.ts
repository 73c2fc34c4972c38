/**
 * The floor of a gateway that reads each chunk in JavaScript, for the paced rows: Switchyard's
 * own HTTP client to UPSTREAM (pooled connections, chunked bodies) and a JavaScript stream as
 * the answer's body, each piece of the upstream's body written as it came. No validation,
 * auth, limits, parsing, translation or logging. The bare pass-through (`passthrough.ts`) hands
 * the upstream's body to Deno whole, so no JavaScript runs per chunk there; the distance from
 * it to this proxy is what Deno's runtime charges any such gateway for touching the chunks.
 *
 *   UPSTREAM=http://127.0.0.1:9100 PORT=9200 deno run -A bench/js_stream_floor.ts
 */
import { NativeHttpClient } from "../src/http/client/native.ts";
import type { ClientResponse } from "../src/http/client/types.ts";

const upstream = Deno.env.get("UPSTREAM") ?? "http://127.0.0.1:9100";
const port = Number(Deno.env.get("PORT") ?? 9200);
const client = new NativeHttpClient();

/** The answer's body: the upstream body's pieces, each copied (a piece is a view of the
 * connection's buffer, reused by its next read), read when the client asks for more. */
function body(answer: ClientResponse): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const piece = answer.take();
          if (piece === null) return controller.close();
          if (piece !== undefined) return controller.enqueue(piece.slice());
          await answer.more();
        }
      } catch (e) {
        controller.error(e);
      }
    },
    cancel() {
      answer.cancel();
    },
  }, { highWaterMark: 0 });
}

Deno.serve({ port, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
  const url = new URL(request.url);
  const answer = await client.request({
    method: request.method,
    url: upstream + url.pathname + url.search,
    headers: { "content-type": request.headers.get("content-type") ?? "application/json" },
    body: await request.text(),
    signal: request.signal,
  });
  return new Response(body(answer), {
    status: answer.status,
    headers: { "content-type": answer.headers.get("content-type") ?? "text/event-stream" },
  });
});
