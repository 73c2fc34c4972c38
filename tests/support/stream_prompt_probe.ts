/**
 * Run with `--v8-flags=--expose-gc` by `tests/perf/stream_prompt_test.ts`: opens streamed chats
 * with long prompts through `app.handler` in this process, at a front door (`chat` or `messages`, the
 * second argument), against an upstream (OpenAI's or Anthropic's style, the first argument) that
 * sends the first events and then holds every stream open; once each client has read its first
 * bytes, runs full collections and prints how much of the heap the open streams keep, beside the
 * bytes of their prompts. A stream needs its prompt only until its upstream call is made. With
 * `cache` as the third argument the model has a response cache (every stream a miss, gathered for
 * the cache as it passes).
 */
import { anthropicEvents, openaiEvents } from "../../bench/fixtures.ts";
import { exposedGc, probeApp } from "./probe_app.ts";

const STYLE = Deno.args[0] === "anthropic" ? "anthropic" : "openai";
const DOOR = Deno.args[1] === "messages" ? "/v1/messages" : "/v1/chat/completions";
const STREAMS = 12;
const PROMPT_CHARS = 1_000_000;
const gc = exposedGc();

/** Each stream's events after the first ones, sent once the probe has measured. */
const releases: (() => void)[] = [];
const events = STYLE === "openai" ? openaiEvents(3) : anthropicEvents(3);
const encoder = new TextEncoder();
const heldFetch = ((_input: string | URL | Request, _init?: RequestInit) => {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(events.slice(0, 3).join("")));
      releases.push(() => {
        controller.enqueue(encoder.encode(events.slice(3).join("")));
        controller.close();
      });
    },
  });
  return Promise.resolve(
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
  );
}) as typeof fetch;

const probe = await probeApp({
  prefix: "switchyard-stream-prompt-",
  id: "held",
  style: STYLE,
  fetch: heldFetch,
  ...(Deno.args[2] === "cache"
    ? { model: { cache: { ttl_seconds: 60, namespace: "probe" } } }
    : {}),
});
const { app } = probe;

/** Opens stream `i` and reads its first bytes; returns its body's reader. */
async function open(i: number): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const prompt = `${i} `.padEnd(PROMPT_CHARS, "lorem ipsum ");
  const bytes = encoder.encode(JSON.stringify({
    model: "held",
    stream: true,
    max_tokens: 64,
    messages: [{ role: "user", content: prompt }],
  }));
  // A stream body, as a server's request has: the probe keeps no copy of it.
  const request = new Request(`http://127.0.0.1:8000${DOOR}`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(bytes.length) },
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
  });
  const info = {
    remoteAddr: { transport: "tcp", hostname: "10.0.0.1", port: 40000 + i },
    completed: Promise.resolve(),
  } as unknown as Deno.ServeHandlerInfo;
  const response = await app.handler(request, info);
  if (response.status !== 200) {
    throw new Error(`status ${response.status}: ${await response.text()}`);
  }
  const reader = response.body!.getReader();
  if ((await reader.read()).done) throw new Error("the stream ended at once");
  return reader;
}

const heapAfterGc = async (): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc({ type: "major", execution: "sync" });
  gc({ type: "major", execution: "sync" });
  return Deno.memoryUsage().heapUsed;
};

// One stream first, so that what every stream's first use compiles or caches is in the baseline.
const first = await open(STREAMS);
releases.pop()!();
while (!(await first.read()).done) { /* drain */ }
const before = await heapAfterGc();
const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
for (let i = 0; i < STREAMS; i++) readers.push(await open(i));
const during = await heapAfterGc();
for (const release of releases) release();
for (const reader of readers) while (!(await reader.read()).done) { /* drain */ }
console.log(JSON.stringify({
  keptBytes: during - before,
  promptBytes: STREAMS * PROMPT_CHARS,
}));
await probe.close();
