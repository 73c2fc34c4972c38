import assert from "node:assert/strict";
import { ApiError, internalError, upstreamError } from "../../src/errors.ts";
import {
  type ChatStreamOptions,
  chatStreamResponse,
  type StreamOutcome,
} from "../../src/http/sse_response.ts";
import type { ChatChunk, Usage } from "../../src/types/openai.ts";
import { chunk, usageChunk } from "../support/chunks.ts";

const USAGE: Usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

const STREAM: ChatChunk[] = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Hi" }),
  chunk({ content: " there" }),
  chunk({}, "stop"),
  usageChunk(USAGE),
];

/** A chunk source that counts what it has produced and whether it was stopped. */
class Source {
  produced = 0;
  returned = false;
  constructor(readonly chunks: ChatChunk[], readonly fail?: { after: number; error: unknown }) {}
  async *[Symbol.asyncIterator](): AsyncGenerator<ChatChunk> {
    try {
      for (const [i, c] of this.chunks.entries()) {
        if (this.fail && i === this.fail.after) throw this.fail.error;
        await Promise.resolve();
        this.produced++;
        yield structuredClone(c);
      }
    } finally {
      this.returned = true;
    }
  }
}

function options(extra: Partial<ChatStreamOptions> = {}) {
  const outcomes: StreamOutcome[] = [];
  const usages: Usage[] = [];
  let deferred = 0;
  const abort = new AbortController();
  const opts: ChatStreamOptions = {
    includeUsage: false,
    abort,
    signal: abort.signal,
    onUsage: (u) => usages.push(u),
    deferLog: () => {
      deferred++;
      return (o) => outcomes.push(o);
    },
    onUnexpected: () => internalError("req_x"),
    ...extra,
  };
  return { opts, outcomes, usages, deferred: () => deferred };
}

async function events(response: Response): Promise<string[]> {
  const text = await response.text();
  assert.ok(text.endsWith("\n\n"), "the body ends with a complete event");
  return text.slice(0, -2).split("\n\n");
}

Deno.test("chatStreamResponse frames each chunk as an event and ends with [DONE]", async () => {
  const { opts, outcomes, usages } = options();
  const response = await chatStreamResponse(new Source(STREAM), opts);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
  const list = await events(response);
  assert.deepEqual(list, [
    ...STREAM.slice(0, 4).map((c) => `data: ${JSON.stringify(c)}`),
    "data: [DONE]",
  ]);
  assert.deepEqual(usages, [USAGE], "usage is recorded even when not forwarded");
  assert.deepEqual(outcomes, [{ status: 200, error: null }]);
});

Deno.test("with include_usage the usage chunk is forwarded and other chunks carry usage: null", async () => {
  const { opts } = options({ includeUsage: true });
  const list = await events(await chatStreamResponse(new Source(STREAM), opts));
  const parsed = list.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  assert.equal(parsed.length, 5);
  assert.ok(parsed.slice(0, 4).every((c) => c.usage === null));
  assert.deepEqual(parsed[4], { ...STREAM[4], usage: USAGE });
  assert.equal(list.at(-1), "data: [DONE]");
});

Deno.test("chatStreamResponse pulls one chunk per read and never runs ahead", async () => {
  const source = new Source(STREAM);
  const { opts } = options();
  const response = await chatStreamResponse(source, opts);
  assert.equal(source.produced, 1, "only the first chunk is taken before answering");
  const reader = response.body!.getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(source.produced, 1);
  await reader.read();
  assert.equal(source.produced, 2);
  await reader.cancel();
});

Deno.test("a failure before the first chunk throws, so the caller can answer a JSON error", async () => {
  const { opts, outcomes, deferred } = options();
  const error = upstreamError("upstream down");
  await assert.rejects(
    chatStreamResponse(new Source(STREAM, { after: 0, error }), opts),
    (e: unknown) => e === error,
  );
  assert.equal(deferred(), 0, "the log is not deferred: the caller logs the error");
  assert.deepEqual(outcomes, []);
  await assert.rejects(chatStreamResponse(new Source([]), opts), /without sending anything/);
});

Deno.test("a failure mid-stream becomes an error event with no [DONE]", async () => {
  const { opts, outcomes } = options();
  const error = new ApiError(502, "upstream_error", "lost the upstream", {
    code: "upstream_error",
  });
  const list = await events(
    await chatStreamResponse(new Source(STREAM, { after: 2, error }), opts),
  );
  assert.equal(list.length, 3);
  assert.deepEqual(JSON.parse(list[2]!.slice(6)), {
    error: {
      message: "lost the upstream",
      type: "upstream_error",
      code: "upstream_error",
      param: null,
    },
  });
  assert.ok(!list.includes("data: [DONE]"));
  assert.deepEqual(outcomes, [{ status: 502, error: "upstream_error" }]);

  const unexpected: unknown[] = [];
  const bug = options({
    onUnexpected: (e) => {
      unexpected.push(e);
      return internalError("req_x");
    },
  });
  const bugList = await events(
    await chatStreamResponse(
      new Source(STREAM, { after: 1, error: new TypeError("oops") }),
      bug.opts,
    ),
  );
  assert.equal(bugList.length, 2);
  const body = JSON.parse(bugList[1]!.slice(6));
  assert.equal(body.error.code, "internal_error");
  assert.doesNotMatch(JSON.stringify(body), /oops/);
  assert.ok(unexpected[0] instanceof TypeError);
  assert.deepEqual(bug.outcomes, [{ status: 500, error: "internal_error" }]);
});

Deno.test("cancelling the body aborts the producer, stops the iterator and logs 499", async () => {
  const source = new Source(STREAM);
  const { opts, outcomes } = options();
  const response = await chatStreamResponse(source, opts);
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(opts.abort.signal.aborted, true);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(source.returned, true);
  assert.deepEqual(outcomes, [{ status: 499, error: "client_disconnected" }]);
});

Deno.test("a provider failing because the client's signal fired is a disconnect, not an error", async () => {
  const client = new AbortController();
  const unexpected: unknown[] = [];
  const { opts, outcomes } = options({
    signal: client.signal,
    onUnexpected: (e) => {
      unexpected.push(e);
      return internalError("req_x");
    },
  });
  const abortError = new DOMException("The client went away.", "AbortError");
  const response = await chatStreamResponse(
    new Source(STREAM, { after: 1, error: abortError }),
    opts,
  );
  client.abort(abortError);
  const text = await response.text();
  assert.equal(text, `data: ${JSON.stringify(STREAM[0])}\n\n`, "no error event, no [DONE]");
  assert.deepEqual(unexpected, []);
  assert.deepEqual(outcomes, [{ status: 499, error: "client_disconnected" }]);
});

/** A source that yields its chunks in the given groups. */
async function* batches(groups: ChatChunk[][]): AsyncGenerator<ChatChunk[]> {
  for (const group of groups) {
    await Promise.resolve();
    yield structuredClone(group);
  }
}

Deno.test("a group of chunks is written in one piece, with the usage chunk dropped from it", async () => {
  const { opts, outcomes, usages } = options();
  const response = await chatStreamResponse(
    batches([STREAM.slice(0, 1), STREAM.slice(1, 3), STREAM.slice(3)]),
    opts,
  );
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const reads: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) reads.push(r.value);
  const frame = (c: ChatChunk) => `data: ${JSON.stringify(c)}\n\n`;
  assert.deepEqual(reads, [
    frame(STREAM[0]!),
    frame(STREAM[1]!) + frame(STREAM[2]!),
    frame(STREAM[3]!),
    "data: [DONE]\n\n",
  ]);
  assert.deepEqual(usages, [USAGE]);
  assert.deepEqual(outcomes, [{ status: 200, error: null }]);
});

Deno.test("a group whose only chunk is the dropped usage chunk writes nothing", async () => {
  const { opts } = options();
  const response = await chatStreamResponse(
    batches([STREAM.slice(0, 4), STREAM.slice(4)]),
    opts,
  );
  const list = await events(response);
  assert.deepEqual(list, [
    ...STREAM.slice(0, 4).map((c) => `data: ${JSON.stringify(c)}`),
    "data: [DONE]",
  ]);
});
