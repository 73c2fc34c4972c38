/** The text-chunk fast path of the `openai` adapter's streams (`pushText`, which skips parsing
 * a chunk that only carries text) gives exactly what parsing every chunk gives: the same
 * canonical events, so the same bytes to the client, however the upstream frames its stream. */
import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import { ChatChunkRenderer } from "../../../src/api/chat_completions/stream.ts";
import { ApiError } from "../../../src/errors.ts";
import { SseDecoder } from "../../../src/http/sse.ts";
import { OpenAIProvider } from "../../../src/providers/openai/provider.ts";
import { OpenAIStreamTranslator } from "../../../src/providers/openai/stream.ts";
import { callContext, chatRequest, providerDeps } from "../../support/provider_call.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";

const START = {
  id: "chatcmpl-7",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "gpt-x",
  service_tier: "default",
  system_fingerprint: "fp_1",
  choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
};

/** A text chunk as OpenAI writes it; `patch` replaces pieces of its JSON text. */
function textChunk(content: string, patch: (json: string) => string = (j) => j): string {
  return patch(
    `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",` +
      `"service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":` +
      `{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}]}`,
  );
}

/** The events of `json` after `start`, and the closing ones: through `pushText` (falling back
 * to parsing, as the adapter does) and through parsing alone; and whether `pushText` took it. */
function bothWays(json: string, start: Record<string, unknown> = START) {
  const fast = new OpenAIStreamTranslator();
  const slow = new OpenAIStreamTranslator();
  const fastEvents: CanonicalEvent[] = [];
  const slowEvents: CanonicalEvent[] = [];
  fast.push(structuredClone(start), fastEvents);
  slow.push(structuredClone(start), slowEvents);
  const took = fast.pushText(json, fastEvents);
  if (!took) fast.push(JSON.parse(json), fastEvents);
  slow.push(JSON.parse(json), slowEvents);
  return {
    took,
    fast: [...fastEvents, ...fast.end()],
    slow: [...slowEvents, ...slow.end()],
  };
}

Deno.test("pushText: a text chunk gives the events parsing it gives", () => {
  for (
    const text of [
      "Hello",
      "",
      'say "hi"\\ back\n\ttab',
      "caf\u00e9 \u{1F600} \u2028 \u0000",
      "\u0000switchyard-slot\u0000",
    ]
  ) {
    const { took, fast, slow } = bothWays(textChunk(text));
    assert.equal(took, true, text);
    assert.deepEqual(fast, slow);
  }
  // Escapes an upstream may write that JSON.stringify would not.
  const escaped = bothWays(textChunk("x", (j) => j.replace('"x"', '"\\u00e9\\/\\ud83d\\ude00"')));
  assert.equal(escaped.took, true);
  assert.deepEqual(escaped.fast, escaped.slow);
});

Deno.test("pushText: the fields OpenAI adds (usage null, obfuscation, null tier) change nothing", () => {
  for (
    const patch of [
      (j: string) => j.replace(/}$/, ',"usage":null}'),
      (j: string) => j.replace(/}$/, ',"usage":null,"obfuscation":"Xy2"}'),
      (j: string) => j.replace(/}$/, ',"obfuscation":"Xy2"}'),
      (j: string) => j.replace('"service_tier":"default",', ""),
      (j: string) => j.replace('"system_fingerprint":"fp_1",', '"system_fingerprint":null,'),
      (j: string) => j.replace(/"service_tier":"default","system_fingerprint":"fp_1",/, ""),
    ]
  ) {
    const { took, fast, slow } = bothWays(textChunk("piece", patch));
    assert.equal(took, true, patch(""));
    assert.deepEqual(fast, slow);
  }
});

Deno.test("pushText: anything else is left to parsing, with the same result", () => {
  const cases: [string, string][] = [
    [
      "a field first seen late",
      textChunk("a", (j) => j.replace('"choices"', '"late":1,"choices"')),
    ],

    [
      "a finish",
      textChunk("a", (j) => j.replace('"finish_reason":null', '"finish_reason":"stop"')),
    ],
    ["logprobs", textChunk("a", (j) => j.replace('"logprobs":null', '"logprobs":{"content":[]}'))],
    ["usage", textChunk("a", (j) => j.replace(/}$/, ',"usage":{"prompt_tokens":1}}'))],
    [
      "reasoning",
      textChunk("a", (j) => j.replace('{"content"', '{"reasoning_content":"r","content"')),
    ],
    ["a role", textChunk("a", (j) => j.replace('{"content"', '{"role":"assistant","content"'))],
    ["another choice", textChunk("a", (j) => j.replace('"index":0', '"index":1'))],
    ["spaces", textChunk("a", (j) => j.replace('"delta":', '"delta": '))],
    [
      "another key order",
      textChunk("a", (j) =>
        j.replace('"object":"chat.completion.chunk",', "").replace(
          /}$/,
          ',"object":"chat.completion.chunk"}',
        )),
    ],
    ["a fractional created", textChunk("a", (j) => j.replace("1700000000", "1700000000.5"))],
  ];
  for (const [why, json] of cases) {
    const { took, fast, slow } = bothWays(json);
    assert.equal(took, false, why);
    assert.deepEqual(fast, slow, why);
  }
  // A tier or fingerprint the first chunk did not have is kept for the finish.
  const { service_tier: _, system_fingerprint: __, ...bare } = START;
  const late = bothWays(textChunk("a"), bare);
  assert.equal(late.took, false);
  assert.deepEqual(late.fast, late.slow);
  // The first chunk is always parsed: it starts the stream.
  const first = new OpenAIStreamTranslator();
  assert.equal(first.pushText(textChunk("a"), []), false);
  // Not JSON where a fast path could mistake it for some: left to parsing, which rejects it.
  for (
    const json of [
      textChunk("a", (j) => j.replace("1700000000", "01700000000")),
      textChunk("a", (j) => j.replace('"gpt-x"', '"gpt\\x"')),
      textChunk("a", (j) => j.replace('"a"', '"a\tb"')),
    ]
  ) {
    const translator = new OpenAIStreamTranslator();
    translator.push(structuredClone(START), []);
    assert.equal(translator.pushText(json, []), false, json);
    assert.throws(() => JSON.parse(json));
  }
});

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the adapter streams for an upstream body written as `pieces`: canonical events, or the
 * error that ended them. */
async function throughAdapter(pieces: string[]) {
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-test", { max_retries: 0 });
  deps.http = new FetchHttpClient(() => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(encoder.encode(piece));
        controller.close();
      },
    });
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
  });
  const batches: CanonicalEvent[][] = [];
  let error: ApiError | null = null;
  try {
    const stream = new OpenAIProvider(deps).chatStream(
      chatRequest({ stream: true }),
      callContext(),
    );
    for await (const batch of stream) batches.push(batch);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    error = e;
  }
  return { batches, error };
}

/** The reference: the same body decoded whole and every chunk parsed. */
function byParsing(pieces: string[]) {
  const sse = new SseDecoder();
  const events = [...sse.decode(encoder.encode(pieces.join(""))), ...sse.end()];
  const translator = new OpenAIStreamTranslator();
  const out: CanonicalEvent[] = [];
  for (const event of events) {
    if (event.data === "[DONE]") return { events: [...out, ...translator.end()], cut: false };
    let chunk;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return { events: out, cut: true };
    }
    translator.push(chunk, out);
  }
  return { events: translator.finished ? [...out, ...translator.end()] : out, cut: true };
}

/** The client's bytes for some batches, as the chat completions door renders them. */
function rendered(batches: CanonicalEvent[][]): string {
  const renderer = new ChatChunkRenderer({
    requestId: "req_1",
    created: 1_768_478_400,
    model: "gw-model",
    includeUsage: true,
    excludeReasoning: false,
  });
  let text = "";
  for (const batch of batches) {
    const bytes = renderer.render(batch);
    if (bytes) text += decoder.decode(bytes);
  }
  try {
    text += decoder.decode(renderer.end());
  } catch (e) {
    text += decoder.decode(renderer.error(e as ApiError));
  }
  return text;
}

/** An OpenAI stream (role, `n` text chunks, finish, usage-only last chunk, [DONE]) as SSE. */
function openAIStream(n: number, lineEnd = "\n"): string[] {
  const usage = {
    ...START,
    choices: [],
    usage: { prompt_tokens: 5, completion_tokens: n, total_tokens: 5 + n },
  };
  const finish = {
    ...START,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }],
  };
  const datas = [
    JSON.stringify(START),
    ...Array.from({ length: n }, (_, i) => textChunk(`tok${i} "é" `)),
    JSON.stringify(finish),
    JSON.stringify(usage),
    "[DONE]",
  ];
  return datas.map((d) => `data: ${d}${lineEnd}${lineEnd}`);
}

/** `text` in pieces of `size` characters. */
function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

Deno.test("the adapter's stream: the same events and client bytes as parsing every chunk", async () => {
  const whole = openAIStream(6).join("");
  const bodies: [string, string[]][] = [
    ["one event a read", openAIStream(6)],
    ["all in one read", [whole]],
    ["split every 7 characters", split(whole, 7)],
    ["split every character", split(whole, 1)],
    ["CRLF line ends", split(openAIStream(6, "\r\n").join(""), 13)],
    ["CR line ends", [openAIStream(6, "\r").join("")]],
    ["comments between events", openAIStream(6).flatMap((e) => [": keep-alive\n\n", e])],
    [
      "a chunk's JSON over two data lines",
      openAIStream(3).map((e, i) => i === 2 ? e.replace('"choices":', '\ndata: "choices":') : e),
    ],
    ["a cut stream, finished", openAIStream(4).slice(0, -1)],
    ["a cut stream, unfinished", openAIStream(4).slice(0, 3)],
    ["a stream cut mid-event", [...openAIStream(4).slice(0, 3), 'data: {"id":"chatcmpl-7"']],
  ];
  for (const [why, pieces] of bodies) {
    const { batches, error } = await throughAdapter(pieces);
    const reference = byParsing(pieces);
    const events = batches.flat();
    if (reference.cut && !reference.events.some((e) => e.type === "finish")) {
      // Unfinished: the same events, then the 502 that says so.
      assert.equal(error?.status, 502, why);
      assert.deepEqual(events, reference.events, why);
    } else {
      assert.equal(error, null, why);
      assert.deepEqual(events, reference.events, why);
    }
    assert.equal(rendered(batches), rendered([reference.events]), why);
  }
});
