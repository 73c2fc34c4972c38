/**
 * A fast fake upstream for the load benchmark, speaking OpenAI's chat completions (JSON and
 * SSE) and embeddings (base64 or floats), and Anthropic's Messages API (JSON and SSE). Responses are built once at start.
 *
 *   PORT=9100 CHUNKS=20 DRIP_MS=0 deno run -A bench/upstream.ts
 *
 * CHUNKS is the number of content chunks per stream; DRIP_MS the delay between chunks (the
 * soak test uses 100 ms). A request for the model `bench-ttft-50` is answered 50 ms late, as a
 * model that takes that long to its first token.
 */
import { concatBytes } from "../src/http/bytes.ts";
import {
  ANTHROPIC_JSON,
  anthropicEvents,
  embeddingsJson,
  OPENAI_JSON,
  openaiEvents,
} from "./fixtures.ts";

const port = Number(Deno.env.get("PORT") ?? 9100);
const chunks = Number(Deno.env.get("CHUNKS") ?? 20);
const dripMs = Number(Deno.env.get("DRIP_MS") ?? 0);
const encoder = new TextEncoder();
/** The model whose answers begin 50 ms late. */
const SLOW_FIRST_MODEL = "bench-ttft-50";

const OPENAI_EVENTS = openaiEvents(chunks).map((e) => encoder.encode(e));
const ANTHROPIC_EVENTS = anthropicEvents(chunks).map((e) => encoder.encode(e));
const JSON_HEADERS = { "content-type": "application/json" };
const EMBEDDINGS_BASE64 = encoder.encode(embeddingsJson(true));
const EMBEDDINGS_FLOAT = encoder.encode(embeddingsJson(false));
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function stream(events: Uint8Array<ArrayBuffer>[], signal: AbortSignal): Response {
  if (dripMs === 0) return new Response(concatBytes(events), { headers: SSE_HEADERS });
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i > 0) await new Promise((r) => setTimeout(r, dripMs));
      if (signal.aborted) return controller.close();
      controller.enqueue(events[i++]!);
      if (i === events.length) controller.close();
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

Deno.serve({ port, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
  const path = new URL(request.url).pathname;
  const text = await request.text();
  const streaming = text.includes('"stream":true');
  if (text.includes(`"model":"${SLOW_FIRST_MODEL}"`)) await new Promise((r) => setTimeout(r, 50));
  if (path.endsWith("/chat/completions")) {
    return streaming
      ? stream(OPENAI_EVENTS, request.signal)
      : new Response(OPENAI_JSON, { headers: JSON_HEADERS });
  }
  if (path.endsWith("/embeddings")) {
    const base64 = text.includes('"encoding_format":"base64"');
    return new Response(base64 ? EMBEDDINGS_BASE64 : EMBEDDINGS_FLOAT, { headers: JSON_HEADERS });
  }
  if (path.endsWith("/messages")) {
    return streaming
      ? stream(ANTHROPIC_EVENTS, request.signal)
      : new Response(ANTHROPIC_JSON, { headers: JSON_HEADERS });
  }
  return new Response('{"error":{"message":"not found","type":"invalid_request_error"}}', {
    status: 404,
    headers: JSON_HEADERS,
  });
});
