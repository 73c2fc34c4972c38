/**
 * A fast fake upstream for the load benchmark, speaking OpenAI's chat completions (JSON and
 * SSE) and Anthropic's Messages API (JSON and SSE). Responses are built once at start.
 *
 *   PORT=9100 CHUNKS=20 DRIP_MS=0 deno run -A bench/upstream.ts
 *
 * CHUNKS is the number of content chunks per stream; DRIP_MS the delay between chunks (the
 * soak test uses 100 ms).
 */
const port = Number(Deno.env.get("PORT") ?? 9100);
const chunks = Number(Deno.env.get("CHUNKS") ?? 20);
const dripMs = Number(Deno.env.get("DRIP_MS") ?? 0);
const encoder = new TextEncoder();
const created = 1_700_000_000;

const openaiJson = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created,
  model: "bench-upstream",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "Hello from the benchmark upstream.", refusal: null },
    logprobs: null,
    finish_reason: "stop",
  }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

function openaiEvents(): Uint8Array[] {
  const base = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created,
    model: "bench-upstream",
  };
  const events: unknown[] = [{
    ...base,
    choices: [{
      index: 0,
      delta: { role: "assistant", content: "" },
      logprobs: null,
      finish_reason: null,
    }],
  }];
  for (let i = 0; i < chunks; i++) {
    events.push({
      ...base,
      choices: [{ index: 0, delta: { content: `tok${i} ` }, logprobs: null, finish_reason: null }],
    });
  }
  events.push({
    ...base,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }],
  });
  events.push({
    ...base,
    choices: [],
    usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks },
  });
  return [
    ...events.map((e) => encoder.encode(`data: ${JSON.stringify(e)}\n\n`)),
    encoder.encode("data: [DONE]\n\n"),
  ];
}

const anthropicJson = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "bench-upstream",
  content: [{ type: "text", text: "Hello from the benchmark upstream." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 7 },
});

function anthropicEvents(): Uint8Array[] {
  const ev = (type: string, data: unknown) =>
    encoder.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  const out = [
    ev("message_start", {
      type: "message_start",
      message: {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "bench-upstream",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
    ev("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
  ];
  for (let i = 0; i < chunks; i++) {
    out.push(ev("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: `tok${i} ` },
    }));
  }
  out.push(ev("content_block_stop", { type: "content_block_stop", index: 0 }));
  out.push(ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: chunks },
  }));
  out.push(ev("message_stop", { type: "message_stop" }));
  return out;
}

const OPENAI_EVENTS = openaiEvents();
const ANTHROPIC_EVENTS = anthropicEvents();
const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function stream(events: Uint8Array[], signal: AbortSignal): Response {
  if (dripMs === 0) {
    let total = 0;
    for (const e of events) total += e.length;
    const all = new Uint8Array(total);
    let offset = 0;
    for (const e of events) {
      all.set(e, offset);
      offset += e.length;
    }
    return new Response(all, { headers: SSE_HEADERS });
  }
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
  if (path.endsWith("/chat/completions")) {
    return streaming
      ? stream(OPENAI_EVENTS, request.signal)
      : new Response(openaiJson, { headers: JSON_HEADERS });
  }
  if (path.endsWith("/messages")) {
    return streaming
      ? stream(ANTHROPIC_EVENTS, request.signal)
      : new Response(anthropicJson, { headers: JSON_HEADERS });
  }
  return new Response('{"error":{"message":"not found","type":"invalid_request_error"}}', {
    status: 404,
    headers: JSON_HEADERS,
  });
});
