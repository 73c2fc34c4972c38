/**
 * The chat route's provider-agnostic behaviour, with a scripted fake provider behind it:
 * what it hands the provider, how provider failures and disconnects surface, and the log.
 */
import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { SseDecoderStream } from "../../src/http/sse.ts";
import type { CallContext, Provider } from "../../src/providers/types.ts";
import type { ChatChunk, ChatCompletion, ChatRequest } from "../../src/types/openai.ts";
import { chunk, usageChunk } from "../support/chunks.ts";
import { logRecord, postChat } from "../support/client.ts";
import { dataUrl, pngBytes } from "../support/images.ts";
import { startServer, testConfig } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

type Script = {
  chat?: (req: ChatRequest, ctx: CallContext) => Promise<ChatCompletion>;
  chatStream?: (req: ChatRequest, ctx: CallContext) => AsyncIterable<ChatChunk>;
};

/** A provider that runs the test's script and records every call. */
class FakeProvider implements Provider {
  readonly id = "sim";
  readonly calls: { req: ChatRequest; ctx: CallContext }[] = [];
  constructor(readonly script: Script) {}
  chat(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
    this.calls.push({ req, ctx });
    return this.script.chat!(req, ctx);
  }
  chatStream(req: ChatRequest, ctx: CallContext): AsyncIterable<ChatChunk> {
    this.calls.push({ req, ctx });
    return this.script.chatStream!(req, ctx);
  }
}

const USAGE = { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 };

function completion(model: string, content: string): ChatCompletion {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{
      index: 0,
      message: { role: "assistant", content, refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: USAGE,
  };
}

async function serve(script: Script, patch?: (raw: Record<string, unknown>) => void) {
  const provider = new FakeProvider(script);
  const server = await startServer({
    providers: new Map([["sim", provider]]),
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[])[0]!.upstream_model = "upstream-chat-v2";
      patch?.(raw);
    }),
  });
  return { server, provider };
}

const HELLO = { model: "sim-chat", messages: [{ role: "user", content: "hello" }] };

/** Reads SSE events of a response one by one. */
function eventReader(response: Response) {
  return response.body!.pipeThrough(new SseDecoderStream()).getReader();
}

Deno.test("the route hands the provider the validated request and the call context", async () => {
  const { server, provider } = await serve({
    chat: () => Promise.resolve(completion("upstream-chat-v2", "hi back")),
  });
  await using _ = server;
  const res = await postChat(server, { ...HELLO, temperature: 0.5, seed: 3, whatever: 1 });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.model, "sim-chat", "the gateway's model id, not the upstream's");
  assert.equal(body.choices[0].message.content, "hi back");
  const { req, ctx } = provider.calls[0]!;
  assert.equal(req.temperature, 0.5);
  assert.deepEqual(req.extra, { seed: 3 });
  assert.equal(ctx.upstreamModel, "upstream-chat-v2");
  assert.equal(ctx.model.id, "sim-chat");
  assert.equal(ctx.requestId, res.headers.get("x-request-id"));
  assert.equal(ctx.signal.aborted, false);
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.status, 200);
  assert.equal(record.model, "sim-chat");
  assert.equal(record.provider, "sim");
  assert.equal(record.prompt_tokens, 11);
  assert.equal(record.completion_tokens, 3);
  assert.equal(record.stream, undefined);
  assert.equal(record.content, undefined, "no message text unless include_content");
});

Deno.test("a provider error before the first chunk is a JSON error with its status", async () => {
  const { server } = await serve({
    // deno-lint-ignore require-yield
    async *chatStream() {
      throw new ApiError(429, "rate_limit_error", "Upstream is busy.", {
        code: "rate_limit_exceeded",
        headers: { "retry-after": "7" },
      });
    },
  });
  await using _ = server;
  const res = await postChat(server, { ...HELLO, stream: true });
  assert.equal(res.status, 429);
  assert.match(res.headers.get("content-type")!, /application\/json/);
  assert.equal(res.headers.get("retry-after"), "7");
  assert.deepEqual(await res.json(), {
    error: {
      message: "Upstream is busy.",
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: null,
    },
  });
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.status, 429);
  assert.equal(record.error, "rate_limit_exceeded");
});

Deno.test("a provider error mid-stream ends the stream with an error event and no [DONE]", async () => {
  const { server } = await serve({
    async *chatStream() {
      yield chunk({ role: "assistant", content: "" });
      yield chunk({ content: "partial" });
      throw new ApiError(502, "upstream_error", "The upstream connection was lost.", {
        code: "upstream_error",
      });
    },
  });
  await using _ = server;
  const res = await postChat(server, { ...HELLO, stream: true });
  assert.equal(res.status, 200);
  const text = await res.text();
  const events = text.split("\n\n").filter((e) => e !== "");
  assert.equal(events.length, 3);
  assert.deepEqual(JSON.parse(events[2]!.slice("data: ".length)), {
    error: {
      message: "The upstream connection was lost.",
      type: "upstream_error",
      code: "upstream_error",
      param: null,
    },
  });
  assert.ok(!text.includes("[DONE]"));
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.status, 502);
  assert.equal(record.error, "upstream_error");
  assert.equal(record.stream, true);
});

Deno.test("a bug in a provider is a 500 without details; the stack goes to stderr", async () => {
  const { server } = await serve({
    chat: () => Promise.reject(new TypeError("cannot read secret_internal_field")),
  });
  await using _ = server;
  const res = await postChat(server, HELLO);
  assert.equal(res.status, 500);
  const body = await res.json();
  assert.equal(body.error.code, "internal_error");
  assert.doesNotMatch(JSON.stringify(body), /secret_internal_field/);
  assert.match(server.output.err, /secret_internal_field/);
  assert.match(server.output.err, new RegExp(res.headers.get("x-request-id")!));
});

Deno.test("bytes leave as they are produced: the first event arrives before generation ends", async () => {
  const gate = Promise.withResolvers<void>();
  let finished = false;
  const { server } = await serve({
    async *chatStream() {
      yield chunk({ role: "assistant", content: "" });
      yield chunk({ content: "first" });
      await gate.promise;
      yield chunk({ content: " second" });
      yield chunk({}, "stop");
      finished = true;
      yield usageChunk(USAGE);
    },
  });
  await using _ = server;
  const res = await postChat(server, { ...HELLO, stream: true });
  const reader = eventReader(res);
  const first = await reader.read();
  assert.deepEqual(JSON.parse(first.value!.data).choices[0].delta, {
    role: "assistant",
    content: "",
  });
  const second = await reader.read();
  assert.equal(JSON.parse(second.value!.data).choices[0].delta.content, "first");
  assert.equal(finished, false, "two events were read while the provider was still generating");
  gate.resolve();
  const rest: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value.data);
  assert.equal(rest.at(-1), "[DONE]");
  assert.equal(finished, true);
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.prompt_tokens, 11, "usage is logged even when not forwarded");
  assert.equal(rest.filter((d) => d.includes('"usage"')).length, 0);
});

Deno.test("a client that disconnects mid-stream aborts the provider and is logged as 499", async () => {
  const sawAbort = Promise.withResolvers<unknown>();
  let stopped = false;
  const { server } = await serve({
    async *chatStream(_req, ctx) {
      try {
        yield chunk({ role: "assistant", content: "" });
        ctx.signal.addEventListener("abort", () => sawAbort.resolve(ctx.signal.reason));
        await new Promise((_, reject) => ctx.signal.addEventListener("abort", reject));
        yield chunk({ content: "never sent" });
      } finally {
        stopped = true;
      }
    },
  });
  await using _ = server;
  const client = new AbortController();
  const res = await postChat(server, { ...HELLO, stream: true }, { signal: client.signal });
  const reader = eventReader(res);
  await reader.read();
  client.abort();
  await sawAbort.promise;
  await waitFor(() => stopped, "the provider's generator to finish");
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.status, 499);
  assert.equal(record.error, "client_disconnected");
  assert.equal(record.stream, true);
  assert.doesNotMatch(server.output.err, /"level":"error"/);
});

Deno.test("a client that disconnects during a non-streamed call aborts the provider too", async () => {
  const sawAbort = Promise.withResolvers<void>();
  const started = Promise.withResolvers<void>();
  const { server } = await serve({
    chat: (_req, ctx) =>
      new Promise((_, reject) => {
        started.resolve();
        ctx.signal.addEventListener("abort", () => {
          sawAbort.resolve();
          reject(ctx.signal.reason);
        });
      }),
  });
  await using _ = server;
  const client = new AbortController();
  const pending = postChat(server, HELLO, { signal: client.signal }).catch((e) => e);
  await started.promise;
  client.abort();
  await sawAbort.promise;
  assert.ok(await pending instanceof Error);
  const record = await waitFor(
    () => server.output.records().find((r) => r.path === "/v1/chat/completions"),
    "the log record",
  );
  assert.equal(record.status, 499);
  assert.equal(record.error, "client_disconnected");
  assert.doesNotMatch(server.output.err, /"level":"error"/);
});

Deno.test("with logs.include_content the record holds the messages and the reply", async () => {
  const { server } = await serve({
    chat: () => Promise.resolve(completion("x", "plain reply")),
    async *chatStream() {
      yield chunk({ role: "assistant", content: "" });
      yield chunk({ content: "streamed" });
      yield chunk({ content: " reply" });
      yield chunk({}, "stop");
      yield usageChunk(USAGE);
    },
  }, (raw) => {
    raw.logs = { include_content: true };
  });
  await using _ = server;
  const image = dataUrl("image/png", pngBytes(3, 3));
  const messages = [{
    role: "user",
    content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: image } }],
  }];
  const plain = await postChat(server, { model: "sim-vision", messages });
  await plain.body?.cancel();
  const streamed = await postChat(server, { model: "sim-vision", messages, stream: true });
  await streamed.text();
  const a = await logRecord(server, plain.headers.get("x-request-id"));
  const b = await logRecord(server, streamed.headers.get("x-request-id"));
  assert.deepEqual(a.content, {
    messages: [{ role: "user", content: "look" }],
    output: { role: "assistant", content: "plain reply", refusal: null },
  });
  assert.deepEqual((b.content as { output: unknown }).output, {
    role: "assistant",
    content: "streamed reply",
    refusal: null,
  });
  assert.ok(!server.output.out.includes(image.slice(30)), "no image data in the log");
});
