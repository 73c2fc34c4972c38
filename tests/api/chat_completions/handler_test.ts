/**
 * The chat route's provider-agnostic behaviour, with a scripted fake provider behind it:
 * what it hands the provider, how its answers, failures and disconnects surface, the
 * dropped-params header, the model's default max_tokens, and the log.
 */
import assert from "node:assert/strict";
import type { CanonicalRequest } from "../../../src/canonical/conversation.ts";
import type { CanonicalEvent } from "../../../src/canonical/events.ts";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import { ApiError } from "../../../src/errors.ts";
import { SseDecoderStream } from "../../../src/http/sse.ts";
import type { CallContext, Provider } from "../../../src/providers/types.ts";
import { logRecord, postChat } from "../../support/client.ts";
import { textEvents } from "../../support/events.ts";
import { dataUrl, pngBytes } from "../../support/images.ts";
import { startServer, testConfig } from "../../support/server.ts";
import { waitFor } from "../../support/wait.ts";

type Script = {
  chat?: (req: CanonicalRequest, ctx: CallContext) => Promise<CanonicalResult>;
  chatStream?: (req: CanonicalRequest, ctx: CallContext) => AsyncIterable<CanonicalEvent[]>;
};

/** A provider that runs the test's script and records every call. */
class FakeProvider implements Provider {
  readonly id = "sim";
  readonly calls: { req: CanonicalRequest; ctx: CallContext }[] = [];
  constructor(readonly script: Script) {}
  chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    this.calls.push({ req, ctx });
    return this.script.chat!(req, ctx);
  }
  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    this.calls.push({ req, ctx });
    return this.script.chatStream!(req, ctx);
  }
}

const USAGE = { input: 11, output: 3 };

function result(text: string, patch: Partial<CanonicalResult> = {}): CanonicalResult {
  return {
    id: "chatcmpl-fake",
    parts: [{ type: "text", text }],
    finish: "stop",
    usage: USAGE,
    ...patch,
  };
}

/** Each event of a text stream as its own batch. */
async function* batches(events: CanonicalEvent[]): AsyncGenerator<CanonicalEvent[]> {
  for (const event of events) yield [event];
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

Deno.test("the route hands the provider the canonical request and the call context", async () => {
  const { server, provider } = await serve({
    chat: () => Promise.resolve(result("hi back")),
  });
  await using _ = server;
  const res = await postChat(server, {
    ...HELLO,
    temperature: 0.5,
    seed: 3,
    whatever: 1,
    reasoning_effort: "low",
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-dropped-params"), null, "nothing dropped");
  const body = await res.json();
  assert.equal(body.model, "sim-chat", "the gateway's model id, not the upstream's");
  assert.equal(body.id, "chatcmpl-fake");
  assert.equal(body.choices[0].message.content, "hi back");
  assert.deepEqual(body.usage, { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  const { req, ctx } = provider.calls[0]!;
  assert.equal(req.model, "sim-chat");
  assert.equal(req.options.temperature, 0.5);
  assert.equal(req.options.seed, 3);
  assert.deepEqual(req.options.reasoning, { effort: "low" });
  assert.equal(req.options.maxTokens, 256);
  assert.equal(req.options.maxTokensGiven, false);
  assert.deepEqual(req.extras, { protocol: "openai_chat", fields: { whatever: 1 } });
  assert.equal(ctx.upstreamModel, "upstream-chat-v2");
  assert.equal(ctx.model.id, "sim-chat");
  assert.equal(ctx.requestId, res.headers.get("x-request-id"));
  assert.equal(ctx.signal.aborted, false);
  assert.deepEqual([...ctx.dropped], []);
  const record = await logRecord(server, res.headers.get("x-request-id"));
  assert.equal(record.status, 200);
  assert.equal(record.model, "sim-chat");
  assert.equal(record.provider, "sim");
  assert.equal(record.prompt_tokens, 11);
  assert.equal(record.completion_tokens, 3);
  assert.equal(record.stream, undefined);
  assert.equal(record.content, undefined, "no message text unless include_content");
});

Deno.test("max_tokens: the caller's, else the model's default_max_tokens, else 256", async () => {
  const { server, provider } = await serve({
    chat: () => Promise.resolve(result("ok")),
  }, (raw) => {
    (raw.models as Record<string, unknown>[])[1]!.default_max_tokens = 4096;
  });
  await using _ = server;
  for (
    const [body, max, given] of [
      [{ ...HELLO, model: "sim-vision" }, 4096, false],
      [{ ...HELLO, model: "sim-vision", max_tokens: 7 }, 7, true],
      [HELLO, 256, false],
    ] as const
  ) {
    const res = await postChat(server, body);
    await res.body?.cancel();
    const { req } = provider.calls.at(-1)!;
    assert.deepEqual([req.options.maxTokens, req.options.maxTokensGiven], [max, given]);
  }
  assert.throws(
    () =>
      testConfig((raw) => {
        (raw.models as Record<string, unknown>[])[0]!.default_max_tokens = 0;
      }),
    /models\[0\]\.default_max_tokens/,
  );
});

Deno.test("params the back end dropped are named in x-switchyard-dropped-params", async () => {
  const { server } = await serve({
    chat: (_req, ctx) => {
      ctx.dropped.add("seed");
      ctx.dropped.add("frequency_penalty");
      return Promise.resolve(result("ok"));
    },
    async *chatStream(_req, ctx) {
      ctx.dropped.add("top_p");
      ctx.dropped.add("logprobs");
      yield* batches(textEvents(["a"]));
    },
  });
  await using _ = server;
  const plain = await postChat(server, { ...HELLO, seed: 1, frequency_penalty: 1 });
  assert.equal(plain.headers.get("x-switchyard-dropped-params"), "frequency_penalty,seed");
  await plain.body?.cancel();
  const streamed = await postChat(server, { ...HELLO, stream: true, top_p: 0.5, logprobs: true });
  assert.equal(streamed.headers.get("x-switchyard-dropped-params"), "logprobs,top_p");
  assert.match(await streamed.text(), /\[DONE\]/);
});

Deno.test("URL images need image_input, and reach the provider as URLs", async () => {
  const { server, provider } = await serve({ chat: () => Promise.resolve(result("ok")) });
  await using _ = server;
  const url = {
    model: "sim-chat",
    messages: [{
      role: "user",
      content: [{ type: "text", text: "see" }, {
        type: "image_url",
        image_url: { url: "https://example.com/a.png" },
      }],
    }],
  };
  const refused = await postChat(server, url);
  assert.equal(refused.status, 400);
  const error = (await refused.json()).error;
  assert.deepEqual([error.code, error.param], ["unsupported_capability", "messages[0].content[1]"]);
  const accepted = await postChat(server, { ...url, model: "sim-vision" });
  assert.equal(accepted.status, 200);
  await accepted.body?.cancel();
  assert.deepEqual(provider.calls.at(-1)!.req.messages[0]!.parts[1], {
    type: "image",
    source: { kind: "url", url: "https://example.com/a.png" },
  });
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
      yield [{ type: "start" }];
      yield [
        { type: "block_start", index: 0, block: { type: "text" } },
        { type: "block_delta", index: 0, delta: { type: "text", text: "partial" } },
      ];
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
  assert.equal(events.length, 3, "role, partial, error");
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
  const events = textEvents(["first", " second"]);
  const { server } = await serve({
    async *chatStream() {
      yield events.slice(0, 1);
      yield events.slice(1, 3);
      await gate.promise;
      yield events.slice(3, 5);
      finished = true;
      yield events.slice(5);
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
        yield textEvents(["hi"]).slice(0, 3);
        ctx.signal.addEventListener("abort", () => sawAbort.resolve(ctx.signal.reason));
        await new Promise((_, reject) => ctx.signal.addEventListener("abort", reject));
        yield textEvents(["never sent"]).slice(2, 3);
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
    chat: () => Promise.resolve(result("plain reply")),
    chatStream: () => batches(textEvents(["streamed", " reply"])),
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

Deno.test("reasoning and a paused turn reach the client; reasoning.exclude hides the reasoning", async () => {
  const parts: CanonicalResult["parts"] = [
    { type: "reasoning", text: "Search first.", signature: "sig", style: "anthropic" },
    { type: "text", text: "Searching…" },
  ];
  const { server } = await serve({
    chat: () => Promise.resolve(result("", { parts, finish: "pause", stopDetail: "pause_turn" })),
  });
  await using _ = server;
  const res = await postChat(server, HELLO);
  const choice = (await res.json()).choices[0];
  assert.equal(choice.finish_reason, "length");
  assert.equal(choice.stop_reason, "pause_turn");
  assert.equal(choice.message.reasoning_content, "Search first.");
  assert.deepEqual(choice.message.thinking_blocks, [
    { type: "thinking", thinking: "Search first.", signature: "sig" },
  ]);
  const hidden = await postChat(server, { ...HELLO, reasoning: { effort: "high", exclude: true } });
  const message = (await hidden.json()).choices[0].message;
  assert.equal(message.reasoning_content, undefined);
  assert.equal(message.thinking_blocks, undefined);
  assert.equal(message.content, "Searching…");
});
